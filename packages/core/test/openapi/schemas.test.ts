import type { TestApi } from '../../../../test/support/api';
import { testEntities } from '../../../../test/support/fixtures';
import { startWithDocument, type Doc, type Operation } from './support';

describe('OpenAPI schemas of records, upserts and jobs', () => {
  let t: TestApi;
  let doc: Doc;
  beforeAll(async () => ({ t, doc } = await startWithDocument('sqlite', { entities: testEntities })));
  afterAll(() => t.close());

  it('describes the upsert result item in both generations, and a job result as any JSON value', () => {
    for (const path of ['/api/upsert', '/api/v1/upsert', '/api/v1/MassActions/action/upsert']) {
      const op = doc.paths[path].post as Operation;
      expect(op.responses?.['200']).toMatchObject({ content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/UpsertResult' } } } } });
    }
    const schemas = (doc.components as unknown as { schemas: Record<string, { properties: Record<string, Record<string, unknown>>; required?: string[] }> }).schemas;
    expect(schemas.UpsertResult.required).toEqual(['status', 'stored']);
    expect(schemas.UpsertResult.properties.status.enum).toEqual(['Created', 'Updated', 'NotModified', 'Failed']);
    expect(schemas.UpsertResult.properties.stored.type).toBe('boolean');
    expect(Object.keys(schemas.UpsertResult.properties).sort()).toEqual(['entity', 'message', 'status', 'stored']);
    expect(schemas.Job.properties.result.type).toEqual(['object', 'array', 'null']);
    expect(Object.keys(schemas.Job.properties)).toEqual(
      expect.arrayContaining(['id', 'type', 'status', 'progress', 'result', 'message', 'createdAt', 'startedAt', 'endedAt']),
    );
    expect(schemas.Job.properties.payload).toBeUndefined();
    expect(schemas.JobUpdate.properties.result).toBeUndefined();
  });

  it('describes records with the keys reads return', () => {
    const schemas = (doc.components as unknown as { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> }).schemas;
    expect(Object.keys(schemas.Product.properties)).toEqual(
      expect.arrayContaining(['id', 'name', 'brandId', 'brandName', 'categoriesIds', 'categoriesNames', 'createdAt', 'createdById', 'createdByName']),
    );
    expect(schemas.User.properties.password).toBeUndefined();
    expect(schemas.UserCreate.properties.password).toMatchObject({ writeOnly: true });
    expect(schemas.ProductCreate.required).toEqual(['name']);
  });

  it("asks in a create body only what a create needs: an option's code is derived when absent", () => {
    const schemas = (doc.components as unknown as { schemas: Record<string, { properties: Record<string, { description?: string }>; required?: string[] }> }).schemas;
    // the list is required, by its id or by a link object (`extensibleEnum: {code}`): neither key alone
    expect(schemas.ExtensibleEnumOptionCreate.required).toBeUndefined();
    expect(schemas.ExtensibleEnumOptionCreate.properties.extensibleEnumId.description).toMatch(/Required on create, unless `extensibleEnum` names the record by an object/);
    expect(schemas.ProductCreate.required).toEqual(['name']);
    expect(schemas.ExtensibleEnumOptionCreate.properties.code.description).toMatch(/derived from `name`/);
    expect(schemas.ExtensibleEnumOptionCreate.properties.id).toBeDefined();
  });

  it('answers a read with a record that matches its schema (date-times are not RFC 3339)', async () => {
    const created = await t.post('/api/Product', { name: 'Chair', availableAt: '2024-05-01T10:00:00Z' }).expect(200);
    expect(created.body.availableAt).toBe('2024-05-01 10:00:00');
    const schemas = (doc.components as unknown as { schemas: Record<string, { properties: Record<string, { format?: string; pattern?: string }> }> }).schemas;
    for (const key of ['availableAt', 'createdAt', 'modifiedAt']) {
      expect(schemas.Product.properties[key].format).not.toBe('date-time');
      expect(created.body[key]).toMatch(new RegExp(schemas.Product.properties[key].pattern as string));
    }
  });
});
