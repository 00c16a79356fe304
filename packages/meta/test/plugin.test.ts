import { BootError, createEntityApi } from '@entity-records/core';
import meta from '@entity-records/meta';
import { startTestApi } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { entities } from './fixtures';

describe('@entity-records/meta options', () => {
  it('refuses an unknown category at start-up', () => {
    expect(() => createEntityApi({ database: 'sqlite::memory:', entities, plugins: [[meta, { categories: ['permissions', 'owner' as never] }]] })).toThrow(BootError);
  });

  it.each(TEST_DBS)('adds only the categories asked for (%s)', async (kind) => {
    const t = await startTestApi(kind, { entities, plugins: [[meta, { categories: ['options'] }]] });
    try {
      await t.post('/api/Product', { name: 'Chair' }).expect(200);
      for (const base of ['/api', '/api/v1']) {
        const res = await t.get(`${base}/Product`).set('With-Meta', 'true').expect(200);
        expect(res.body.list[0]._meta).toEqual({ options: { status: null, tags: [] } });
      }
    } finally {
      await t.close();
    }
  });
});
