import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

describe.each(TEST_DBS)('metadata on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, languages: ['en_US', 'de_DE'] });
  });
  afterAll(() => t.close());

  it.each(['/api/metadata', '/api/v1/Metadata', '/api/v1/metadata'])('%s describes entities, links, indexes and field types', async (path) => {
    const { body } = await t.get(path).expect(200);
    expect(Object.keys(body).sort()).toEqual(['app', 'entityDefs', 'fields', 'scopes']);
    expect(body.entityDefs.Product.fields.sku).toMatchObject({ type: 'varchar', unique: true });
    expect(body.entityDefs.Product.fields.color).toMatchObject({ type: 'enum', options: ['red', 'green', 'blue'] });
    expect(body.entityDefs.Product.links.brand).toEqual({ type: 'belongsTo', entity: 'Brand' });
    expect(body.entityDefs.Product.links.categories).toMatchObject({ type: 'manyToMany', entity: 'Category', foreign: 'products' });
    expect(body.entityDefs.Brand.links.products).toMatchObject({ type: 'hasMany', entity: 'Product', foreign: 'brand' });
    expect(body.entityDefs.Product.uniqueIndexes).toEqual({ brand_mpn: ['brand', 'mpn'] });
    expect(body.scopes.Product).toMatchObject({ hasAttributes: false });
    expect(Object.keys(body.fields)).toEqual(expect.arrayContaining(['varchar', 'link', 'linkMultiple', 'jsonObject']));
    expect(body.app.languages).toEqual(['en_US', 'de_DE']);
    expect(JSON.stringify(body)).not.toContain('scrypt');
  });
});
