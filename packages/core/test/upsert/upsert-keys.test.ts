import { defineEntity } from '@entity-records/core';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { UPSERT_PATHS, type UpsertResult } from './support';

/**
 * Lookups of a batch by keys that are no text: a unique integer, a unique float and a unique
 * index of one date-time field (PostgreSQL binds many keys as one array of the column's type).
 */
const Part = defineEntity({
  name: 'Part',
  fields: {
    name: { type: 'varchar', required: true },
    number: { type: 'int', unique: true },
    weight: { type: 'float', unique: true },
    madeAt: { type: 'datetime' },
  },
  uniqueIndexes: { made: ['madeAt'] },
});

describe.each(TEST_DBS)('upsert keys of other types on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Part] });
  });
  afterAll(() => t.close());

  describe.each(UPSERT_PATHS)('generation %s: %s', (gen, path, base) => {
    const offset = gen === 'A' ? 0 : 1000;
    const statuses = (body: UpsertResult[]) => body.map((r) => r.status);

    it('finds records by a unique integer, a unique float and a one-field unique index of date-times', async () => {
      const byNumber = Array.from({ length: 20 }, (_, i) => ({ entity: 'Part', payload: { name: `N${i}`, number: offset + i } }));
      const byWeight = Array.from({ length: 20 }, (_, i) => ({ entity: 'Part', payload: { name: `W${i}`, weight: offset + i + 0.25 } }));
      const year = gen === 'A' ? 2030 : 2031;
      const byMade = Array.from({ length: 20 }, (_, i) => ({ entity: 'Part', payload: { name: `M${i}`, madeAt: `${year}-01-${String(i + 1).padStart(2, '0')} 08:30:00` } }));
      const items = [...byNumber, ...byWeight, ...byMade];
      const first = (await t.post(path, items).expect(200)).body as UpsertResult[];
      expect(statuses(first)).toEqual(items.map(() => 'Created'));
      const again = (await t.post(path, items.map((item) => ({ ...item, payload: { ...item.payload, name: `${item.payload.name} again` } }))).expect(200)).body as UpsertResult[];
      expect(statuses(again)).toEqual(items.map(() => 'Updated'));
      expect(again.map((r) => r.entity?.id)).toEqual(first.map((r) => r.entity?.id));
      // One record per item, no duplicates made by a lookup that missed.
      const stored = (await t.get(`${base}/Part?totalOnly=true&where[0][type]=in&where[0][attribute]=id&where[0][value][]=${first.map((r) => r.entity?.id).join('&where[0][value][]=')}`).expect(200)).body.total;
      expect(stored).toBe(items.length);
    });
  });
});
