import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

const PATHS = [
  ['A', '/api/upsert'],
  ['B', '/api/v1/MassActions/action/upsert'],
] as const;

interface Result {
  status: string;
  stored: boolean;
  entity?: Record<string, unknown>;
  message?: string;
}

const statuses = (body: Result[]) => body.map((r) => r.status);

describe.each(TEST_DBS)('upsert results on %s', (kind) => {
  let t: TestApi;
  let categories: string[];
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, auth: { tokenCacheSeconds: 3600 } });
    categories = [];
    for (const code of ['r1', 'r2']) categories.push((await t.post('/api/Category', { name: code, code }).expect(200)).body.id);
  });
  afterAll(() => t.close());

  describe.each(PATHS)('generation %s: %s', (gen, path) => {
    it('tells Updated from NotModified within one second on the single-record path (link objects, entities with hooks)', async () => {
      const withObject = (price: number) => ({ entity: 'Product', payload: { name: 'Obj', sku: `RO-${gen}`, price, brand: { name: `RO-brand-${gen}` } } });
      expect(statuses((await t.post(path, [withObject(1)]).expect(200)).body)).toEqual(['Created']);
      expect(statuses((await t.post(path, [withObject(2)]).expect(200)).body)).toEqual(['Updated']);
      expect(statuses((await t.post(path, [withObject(2)]).expect(200)).body)).toEqual(['NotModified']);
      const user = (name: string) => ({ entity: 'User', payload: { userName: `ru-${gen}`, name } });
      expect(statuses((await t.post(path, [user('One')]).expect(200)).body)).toEqual(['Created']);
      expect(statuses((await t.post(path, [user('Two')]).expect(200)).body)).toEqual(['Updated']);
      expect(statuses((await t.post(path, [user('Two')]).expect(200)).body)).toEqual(['NotModified']);
    });
  });
});
