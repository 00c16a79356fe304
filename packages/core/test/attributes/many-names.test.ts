import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, FLAT, startAttributeApi, unique } from './support';

/**
 * Attribute ids and codes in any number, within the body limit: more than a statement may bind
 * (32,766 parameters on SQLite, 65,535 on PostgreSQL) is answered as a few would be, never 500.
 */
describe.each(TEST_DBS)('attribute names past the parameters of a statement on %s', (kind) => {
  let t: TestApi;
  let weight: string;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    weight = await createAttribute(t, { code: 'weight', type: 'float' });
  });
  afterAll(() => t.close());

  /** 40,000 names of no attribute: twice as many parameters (ids and codes) as PostgreSQL binds. */
  const unknown = Array.from({ length: 40_000 }, (_, i) => `none${i}`);

  it.each(GENERATIONS)('answers addAttributes, upsertAttributeValues, DELETE attributeValues and __attributes of 40,000 unknown attributes as of one (generation %s)', async (_g, base) => {
    const id = (await t.post(`${base}/Product`, { name: unique('many') }).expect(200)).body.id;
    const added = await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [weight, ...unknown] });
    expect([added.status, added.body.error?.code]).toEqual([400, 'CORE_VALIDATION_FAILED']);
    // every unknown one counted: the answer lists the first 100
    expect([added.body.error.details.issues.length + added.body.error.details.issuesOmitted]).toEqual([unknown.length]);
    expect(added.body.error.details.issues[0]).toMatchObject({ path: ['attributeIds', 1], code: 'unknown_attribute' });
    const values = await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: weight, value: 1 }, ...unknown.map((attributeId) => ({ attributeId, value: 1 }))]);
    expect([values.status, values.body.error?.code]).toEqual([400, 'CORE_VALIDATION_FAILED']);
    const flat = await t.patch(`${base}/Product/${id}`, { __attributes: [weight, ...unknown] }).set(FLAT);
    expect([flat.status, flat.body.error?.code]).toEqual([400, 'CORE_VALIDATION_FAILED']);
    // Nothing of them was stored.
    expect((await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body).toEqual([]);
    await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [weight] }).expect(200);
    const removed = await t.del(`${base}/Product/${id}/attributeValues`).send({ attributeIds: [weight, ...unknown] }).expect(200);
    expect(removed.body.count).toBe(1);
    expect(removed.body.errors).toHaveLength(unknown.length);
    expect((await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body).toEqual([]);
  });
});
