import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { startAttributeApi, unique } from './support';

/**
 * Webhooks are for admins only (their names, targets and secrets): a link attribute to them would
 * show a webhook's name, as `<key>Name` and `valueName`, to every reader of the record.
 */
describe.each(TEST_DBS)('link attributes to entity types only admins may see on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('are refused for Webhook and WebhookDelivery, link and linkMultiple alike (generation %s)', async (_g, base) => {
    for (const linkEntity of ['Webhook', 'WebhookDelivery']) {
      for (const type of ['link', 'linkMultiple']) {
        const code = unique('hook');
        const res = await t.post(`${base}/Attribute`, { entityType: 'Product', code, name: code, type, linkEntity }).expect(400);
        expect(res.body.error.code).toBe('CORE_VALIDATION_FAILED');
        expect(res.body.error.details.issues).toEqual([expect.objectContaining({ path: ['linkEntity'], code: 'invalid_entity' })]);
      }
    }
    const attributes = (await t.get(`${base}/Attribute?select=code&where=${encodeURIComponent(JSON.stringify([{ type: 'in', attribute: 'linkEntity', value: ['Webhook', 'WebhookDelivery'] }]))}`).expect(200)).body;
    expect(attributes.total).toBe(0);
    // Other entity types stay possible.
    const code = unique('maker');
    await t.post(`${base}/Attribute`, { entityType: 'Product', code, name: code, type: 'link', linkEntity: 'Brand' }).expect(200);
  });
});
