import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { readConfig } from '../src/config';
import { createPim, type Pim } from '../src/app';
import { DEMO_PRODUCTS } from '../src/demo-seed';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../test/support/databases';

jest.setTimeout(120_000);

describe('the demo data setting', () => {
  it('is on for the default database only, and DEMO_DATA says otherwise', () => {
    expect(readConfig({}).demoData).toBe(true);
    expect(readConfig({ DATABASE_URL: 'sqlite::memory:' }).demoData).toBe(false);
    expect(readConfig({ DATABASE_URL: '' }).demoData).toBe(true);
    expect(readConfig({ DEMO_DATA: '0' }).demoData).toBe(false);
    expect(readConfig({ DEMO_DATA: 'false' }).demoData).toBe(false);
    expect(readConfig({ DATABASE_URL: 'postgres://x/y', DEMO_DATA: '1' }).demoData).toBe(true);
    expect(() => readConfig({ DEMO_DATA: 'maybe' })).toThrow("DEMO_DATA must be 1 or 0 (true or false), not 'maybe'");
  });
});

describe.each(TEST_DBS)('the demo data on %s', (kind) => {
  let db: TestDatabase;
  let dir: string;
  const started: Pim[] = [];
  const start = async (demoData: boolean) => {
    // A file, not memory: the second start must find what the first stored.
    const databaseUrl = kind === 'sqlite' ? `sqlite:${path.join(dir, 'demo.sqlite')}` : db.url;
    const config = { ...readConfig({ LOG_LEVEL: 'silent' }), databaseUrl, storageDir: path.join(dir, 'files'), adminPassword: 'demo-seed-password', demoData };
    const pim = await createPim(config);
    started.push(pim);
    return pim;
  };
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-pim-demo-'));
  });
  afterAll(async () => {
    for (const pim of started) await pim.api.close();
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fills a new database with products that have brands, categories, attributes and images, once', async () => {
    // A first start without demo data leaves it empty: the seed needs no brand and no product.
    const empty = await start(false);
    expect(empty.demoProducts).toBe(0);
    expect((await empty.api.repository('Product').find({ variables: {} }, { totalOnly: true })).total).toBe(0);
    await empty.api.close();
    started.pop();
    const pim = await start(true);
    expect(pim.demoProducts).toBe(DEMO_PRODUCTS);
    const login = await request(pim.app).get('/api/userSession').auth('admin', 'demo-seed-password').set('Authorization-Token-Only', 'true').expect(200);
    const token = login.body.authorizationToken as string;
    const list = await request(pim.app)
      .get('/api/Product?maxSize=5&select=name,brand,categories,mainImage&attributes=netWeight,finish,frameMaterial')
      .set('Authorization-Token', token)
      .set('Flatten-Attributes', 'true')
      .expect(200);
    expect(list.body.total).toBe(DEMO_PRODUCTS);
    const first = list.body.list[0];
    expect(first).toMatchObject({ name: 'Chair Classic 1', brandName: 'Arkwood', netWeight: 1, netWeightUnitName: 'kg', finish: 'black', frameMaterial: 'oak' });
    expect(Object.values(first.categoriesNames)).toEqual(['Chairs']);
    const image = await request(pim.app).get(`/api/File/${first.mainImageId}`).set('Authorization-Token', token).expect(200);
    expect(image.body).toMatchObject({ mimeType: 'image/png', width: 96, height: 96 });
    const bytes = await request(pim.app).get(`/api/File/${first.mainImageId}/download`).set('Authorization-Token', token).buffer(true).expect(200);
    expect((bytes.body as Buffer).subarray(1, 4).toString()).toBe('PNG');
    const german = await request(pim.app).get(`/api/Product/${first.id}`).set('Authorization-Token', token).set('language', 'de_DE').expect(200);
    expect(german.body.name).toBe('Stuhl Klassik 1');
    // The README's walk-through creates its own brand, category and attribute beside the demo's.
    const measure = await request(pim.app).get('/api/Measure?where[0][type]=equals&where[0][attribute]=code&where[0][value]=weight').set('Authorization-Token', token).expect(200);
    for (const [path, body] of [
      ['/api/Brand', { name: 'Acme', code: 'ACME' }],
      ['/api/v1/Category', { name: 'Chairs', code: 'chairs' }],
      ['/api/Attribute', { code: 'weight', name: 'Weight', entityType: 'Product', type: 'float', measureId: measure.body.list[0].id }],
      ['/api/Attribute', { code: 'color', entityType: 'Product', type: 'enum', options: ['red'] }],
      ['/api/Attribute', { code: 'material', entityType: 'Product', type: 'varchar' }],
    ] as const) {
      await request(pim.app).post(path).set('Authorization-Token', token).send(body).expect(200);
    }
    await pim.api.close();
    started.pop();
    // A second start leaves the data as it is.
    const again = await start(true);
    expect(again.demoProducts).toBe(0);
    expect((await again.api.repository('Product').find({ variables: {} }, { totalOnly: true })).total).toBe(DEMO_PRODUCTS);
  });
});
