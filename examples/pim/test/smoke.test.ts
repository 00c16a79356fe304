import fs from 'node:fs';
import path from 'node:path';
import { childServerScope, ROOT, signIn, type ChildServer } from '../../../test/support/child-server';
import { createTestDatabase, TEST_DBS } from '../../../test/support/databases';

const SERVER = path.join(ROOT, 'examples/pim/dist/server.js');
const PASSWORD_LINE = /Created user 'admin' with password: (\S+)/g;

// Each test starts real server processes; a busy machine needs more than the default 30 s.
jest.setTimeout(120_000);

const scope = childServerScope(SERVER, 'er-pim-');

function startPim(env: Record<string, string>): Promise<ChildServer> {
  return scope.start({
    env: (port) => ({ PORT: String(port), HOST: '127.0.0.1', STORAGE_DIR: path.join(scope.dir, 'files'), ADMIN_USERNAME: 'admin', PASSWORD_COST: '14', ...env }),
    listening: (port) => new RegExp(`PIM example listening on http://127\\.0\\.0\\.1:${port} `),
  });
}

async function stopPim(server: ChildServer): Promise<void> {
  // The example closes its server and database on SIGTERM and exits 0.
  expect(await scope.stop(server)).toEqual({ code: 0, signal: null });
}

async function tokenFor(url: string, password: string): Promise<string> {
  const res = await signIn(url, 'admin', password);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { authorizationToken: string };
  expect(Object.keys(body)).toEqual(['authorizationToken']);
  return body.authorizationToken;
}

/** A Brand and a Product created, listed in both generations, and the OpenAPI document read. */
async function smoke(server: ChildServer, password: string): Promise<void> {
  const token = await tokenFor(server.url, password);
  const call = async (method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${pathname}`, {
      method,
      headers: { 'Authorization-Token': token, 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const brand = await call('POST', '/api/Brand', { name: 'Acme', code: 'AC' });
  expect(brand).toMatchObject({ status: 200, body: { name: 'Acme', code: 'AC', createdByName: 'Administrator' } });
  const product = await call('POST', '/api/v1/Product', { name: 'Widget', sku: 'W-1', price: 9.5, brandId: brand.body.id });
  expect(product).toMatchObject({ status: 200, body: { name: 'Widget', sku: 'W-1', isActive: true, brandId: brand.body.id, brandName: 'Acme' } });
  for (const base of ['/api', '/api/v1']) {
    const list = await call('GET', `${base}/Product`);
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.list).toEqual([expect.objectContaining({ id: product.body.id, name: 'Widget', brandName: 'Acme' })]);
  }
  // the lists the example seeds on start
  const status = await call('GET', '/api/ExtensibleEnumOption?select=code&sortBy=sortOrder&where[0][type]=equals&where[0][attribute]=code&where[0][value]=draft');
  expect(status.body.total).toBe(1);
  // the measure the example seeds, once whatever the number of servers, and an attribute with its unit
  const weight = await call('GET', '/api/Measure?where[0][type]=equals&where[0][attribute]=code&where[0][value]=weight');
  expect(weight.body.total).toBe(1);
  const measureId = weight.body.list[0].id;
  const units = await call('GET', `/api/Unit?sortBy=code&where[0][type]=equals&where[0][attribute]=measureId&where[0][value]=${measureId}`);
  expect(units.body.list.map((u: { code: string; isDefault: boolean }) => [u.code, u.isDefault])).toEqual([['g', false], ['kg', true]]);
  const attribute = await call('POST', '/api/Attribute', { code: 'netWeight', name: 'Net weight', type: 'float', entityType: 'Product', measureId });
  expect(attribute.status).toBe(200);
  const flat = { 'Flatten-Attributes': 'true' };
  const weighed = await call('PATCH', `/api/Product/${product.body.id}`, { netWeight: 1.5 }, flat);
  expect(weighed.body).toMatchObject({ netWeight: 1.5, netWeightUnitName: 'kg' });
  // a file, the product's main image, and a public link to it
  const image = await call('POST', '/api/File', { name: 'widget.txt', fileContents: `data:text/plain;base64,${Buffer.from('widget').toString('base64')}` });
  expect(image).toMatchObject({ status: 200, body: { name: 'widget.txt', mimeType: 'text/plain', fileSize: 6 } });
  expect(image.body.downloadUrl).toBe(`${server.url}/api/File/${image.body.id}/download`);
  const withImage = await call('PATCH', `/api/Product/${product.body.id}`, { mainImageId: image.body.id });
  expect(withImage.body).toMatchObject({ mainImageId: image.body.id, mainImageName: 'widget.txt' });
  const share = await call('POST', '/api/v1/Sharing', { fileId: image.body.id });
  expect(share.body).toMatchObject({ active: true, available: true, deleted: false, link: `${server.url}/sharings/${share.body.id}.txt` });
  const shared = await fetch(share.body.link);
  expect(shared.status).toBe(200);
  expect(await shared.text()).toBe('widget');
  const meta = await call('GET', '/api/metadata');
  expect(meta.body.app.thumbnailTypes).toEqual({ small: 128, medium: 256, large: 1024 });
  expect(meta.body.entityDefs.Product.fields.mainImage).toMatchObject({ type: 'link', entity: 'File' });
  await multilingualAndMeta(call);
  const doc = await fetch(`${server.url}/apidocs/openapi.json`);
  expect(doc.status).toBe(200);
  const openapi = (await doc.json()) as { openapi: string; info: { title: string }; paths: Record<string, unknown> };
  expect(openapi.openapi).toMatch(/^3\.1\./);
  expect(openapi.info.title).toBe('PIM example');
  expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/api/Product', '/api/v1/Product', '/api/Brand/{id}', '/health', '/api/File/upload', '/api/v1/Sharing', '/sharings/{file}']));
  // the example's own route, described by its JSDoc in the compiled file
  const health = await fetch(`${server.url}/health`);
  expect(health.status).toBe(200);
  expect(await health.json()).toEqual({ status: 'ok' });
  const { components } = openapi as unknown as { components: { schemas: Record<string, { properties: Record<string, unknown> }>; parameters: Record<string, unknown> } };
  expect(Object.keys(components.schemas.Product.properties)).toEqual(expect.arrayContaining(['nameDeDE', 'descriptionDeDE', '_meta']));
  expect(Object.keys(components.parameters)).toEqual(expect.arrayContaining(['WithMeta', 'Language']));
}

type Call = (method: string, pathname: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: Record<string, any> }>;

/** Multilingual Category, Product and option names with `language`; `_meta` with `With-Meta` (CONTRACT.md §9, §11, §13). */
async function multilingualAndMeta(call: Call): Promise<void> {
  const category = await call('POST', '/api/Category', { name: 'Chairs', nameDeDE: 'Stühle', code: 'chairs' });
  expect(category).toMatchObject({ status: 200, body: { name: 'Chairs', nameDeDE: 'Stühle' } });
  const active = await call('GET', '/api/ExtensibleEnumOption?select=code,nameDeDE&where[0][type]=equals&where[0][attribute]=code&where[0][value]=active');
  expect(active.body.list[0]).toMatchObject({ code: 'active', nameDeDE: null });
  await call('PATCH', `/api/ExtensibleEnumOption/${active.body.list[0].id}`, { nameDeDE: 'Aktiv' });
  const product = await call('POST', '/api/Product', {
    name: 'Stool',
    nameDeDE: 'Hocker',
    description: 'Three legs',
    categoriesIds: [category.body.id],
    statusId: active.body.list[0].id,
  });
  expect(product).toMatchObject({ status: 200, body: { descriptionDeDE: null } });
  for (const base of ['/api', '/api/v1']) {
    const german = await call('GET', `${base}/Product/${product.body.id}`, undefined, { language: 'de_DE', 'With-Meta': 'true' });
    expect(german.body).toMatchObject({ name: 'Hocker', description: 'Three legs', statusName: 'Aktiv', categoriesNames: { [category.body.id]: 'Stühle' } });
    expect(german.body.nameDeDE).toBeUndefined();
    expect(german.body._meta).toMatchObject({ permissions: { edit: true, delete: true, stream: true }, options: { status: { code: 'active', name: 'Aktiv' }, tags: [] } });
    const linked = await call('GET', `${base}/entityRelation?entityName=Product&id=${product.body.id}&link=categories`, undefined, { language: 'de_DE', 'With-Meta': '1' });
    expect(linked.body.list[0]).toMatchObject({ name: 'Stühle', _meta: { permissions: { unlink: true } } });
    expect((await call('GET', `${base}/Category`, undefined, { language: 'xx_XX' })).status).toBe(400);
  }
  const metadata = await call('GET', '/api/v1/Metadata');
  expect(metadata.body.app.languages).toEqual(['en_US', 'de_DE']);
  expect(metadata.body.entityDefs.Product.fields.description).toMatchObject({ type: 'text', isMultilang: true });
}

describe('examples/pim server', () => {
  it('serves the API on SQLite with the admin password from the environment', async () => {
    const server = await startPim({ DATABASE_URL: `sqlite:${path.join(scope.dir, 'given.sqlite')}`, ADMIN_PASSWORD: 'pim-smoke-password' });
    await smoke(server, 'pim-smoke-password');
    // file contents live under STORAGE_DIR
    expect(fs.readdirSync(path.join(scope.dir, 'files', 'files')).length).toBeGreaterThan(0);
    expect(server.output()).not.toMatch(/password/i);
    expect((await signIn(server.url, 'admin', 'wrong-password')).status).toBe(401);
    await stopPim(server);
  });

  it('prints a generated admin password once, on the first start only', async () => {
    const env = { DATABASE_URL: `sqlite:${path.join(scope.dir, 'generated.sqlite')}` };
    const first = await startPim(env);
    const printed = [...first.output().matchAll(PASSWORD_LINE)].map((m) => m[1]);
    expect(printed).toHaveLength(1);
    const password = printed[0];
    expect(password.length).toBeGreaterThanOrEqual(16);
    await tokenFor(first.url, password);
    await stopPim(first);

    const second = await startPim(env);
    expect(second.output()).not.toMatch(/password/i);
    await smoke(second, password);
    await stopPim(second);
  });

  it.each(TEST_DBS)('starts two servers at once on one %s database', async (kind) => {
    const db = kind === 'postgres' ? await createTestDatabase(kind) : { url: `sqlite:${path.join(scope.dir, 'shared.sqlite')}`, drop: async () => undefined };
    try {
      const servers = await Promise.all([startPim({ DATABASE_URL: db.url }), startPim({ DATABASE_URL: db.url })]);
      // one of them created the admin and printed its password; the other found the admin
      const printed = servers.flatMap((s) => [...s.output().matchAll(PASSWORD_LINE)].map((m) => m[1]));
      expect(printed).toHaveLength(1);
      await smoke(servers[0], printed[0]);
      await tokenFor(servers[1].url, printed[0]);
      for (const server of servers) await stopPim(server);
    } finally {
      await db.drop();
    }
  });

  it('takes its languages from LANGUAGES, the first being the main one', async () => {
    const server = await startPim({ DATABASE_URL: `sqlite:${path.join(scope.dir, 'languages.sqlite')}`, ADMIN_PASSWORD: 'pim-smoke-password', LANGUAGES: 'de_DE,en_US,fr_FR' });
    const token = await tokenFor(server.url, 'pim-smoke-password');
    const send = async (method: string, pathname: string, body?: unknown, language?: string) => {
      const headers: Record<string, string> = { 'Authorization-Token': token, 'Content-Type': 'application/json', ...(language && { language }) };
      const res = await fetch(`${server.url}${pathname}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const created = await send('POST', '/api/Product', { name: 'Hocker', nameEnUS: 'Stool', nameFrFR: 'Tabouret' });
    expect(created).toMatchObject({ status: 200, body: { name: 'Hocker', nameEnUS: 'Stool', nameFrFR: 'Tabouret' } });
    expect(created.body.nameDeDE).toBeUndefined();
    expect((await send('GET', `/api/Product/${created.body.id}`, undefined, 'main')).body.name).toBe('Hocker');
    expect((await send('GET', `/api/Product/${created.body.id}`, undefined, 'en_US')).body.name).toBe('Stool');
    expect((await send('GET', '/api/metadata')).body.app.languages).toEqual(['de_DE', 'en_US', 'fr_FR']);
    await stopPim(server);
    // An empty value is no value: the default languages.
    for (const LANGUAGES of ['', ' , ']) {
      const fallback = await startPim({ DATABASE_URL: 'sqlite::memory:', ADMIN_PASSWORD: 'pim-smoke-password', LANGUAGES });
      const headers = { 'Authorization-Token': await tokenFor(fallback.url, 'pim-smoke-password') };
      const metadata = (await (await fetch(`${fallback.url}/api/metadata`, { headers })).json()) as Record<string, any>;
      expect([LANGUAGES, metadata.app.languages]).toEqual([LANGUAGES, ['en_US', 'de_DE']]);
      expect([LANGUAGES, (await fetch(`${fallback.url}/api/Product`, { headers: { ...headers, language: 'xx_YY' } })).status]).toEqual([LANGUAGES, 400]);
      await stopPim(fallback);
    }
  });

  if (TEST_DBS.includes('postgres')) {
    it('serves the API on PostgreSQL', async () => {
      const db = await createTestDatabase('postgres');
      try {
        const server = await startPim({ DATABASE_URL: db.url, ADMIN_PASSWORD: 'pim-smoke-password' });
        await smoke(server, 'pim-smoke-password');
        await stopPim(server);
      } finally {
        await db.drop();
      }
    });
  }
});
