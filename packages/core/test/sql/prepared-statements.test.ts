import knex from 'knex';
import { recordQueries, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole } from '../../../../test/support/users';
import { prepareStatement } from '../../src/sql/prepared';
import { runPostgresStatement } from '../../src/sql/dialects/postgres-statements';
import { selectById } from '../../src/sql/read-query';

describe('prepareStatement', () => {
  const db = knex({ client: 'pg' });
  afterAll(() => db.destroy());

  it('keeps the SQL as the driver takes it, with named values and constants in their places', () => {
    const statement = prepareStatement('rows', (param) => db('product').select('name').where({ id: param('id'), deleted: false, sku: param('sku') }));
    expect(statement.sql).toBe('select "name" from "product" where "id" = $1 and "deleted" = $2 and "sku" = $3');
    expect(statement.slots).toEqual([{ name: 'id' }, { value: false }, { name: 'sku' }]);
    expect(statement.name).toMatch(/^er_[A-Za-z0-9_-]{24}$/);
  });

  it('names a text the same way every time, and another text otherwise', () => {
    const build = (column: string) => prepareStatement('rows', (param) => db('product').select(column).where('id', param('id')));
    expect(build('name').name).toBe(build('name').name);
    expect(build('sku').name).not.toBe(build('name').name);
  });

  it('refuses a query that puts a value into its text', () => {
    expect(() => prepareStatement('rows', (param) => db.raw(`select '${param('id')}'`))).toThrow(/not bound/);
  });
});

describe('named statements on one PostgreSQL connection', () => {
  it('are named up to a limit, then run unnamed (the server keeps named ones until the connection ends)', async () => {
    const names: (string | undefined)[] = [];
    const connection = { query: async (config: { name?: string }) => (names.push(config.name), { rows: [], rowCount: 0 }) };
    for (let i = 0; i < 501; i += 1) await runPostgresStatement(connection, { sql: `select ${i}`, name: `s${i}` }, []);
    await runPostgresStatement(connection, { sql: 'select 0', name: 's0' }, []);
    expect(names.slice(0, 500)).toEqual(Array.from({ length: 500 }, (_, i) => `s${i}`));
    expect(names[500]).toBeUndefined();
    expect(names[501]).toBe('s0');
  });
});

describe.each(TEST_DBS)('statements compiled once on %s', (kind) => {
  let t: TestApi;
  let productId: string;
  beforeAll(async () => {
    // Tokens stay cached for the whole file: a token check between two reads would add statements.
    t = await startTestApi(kind, { entities: testEntities, auth: { tokenCacheSeconds: 3600 } });
    const brandId = (await t.post('/api/Brand', { name: 'B' }).expect(200)).body.id;
    const categoryId = (await t.post('/api/Category', { name: 'C', code: 'c' }).expect(200)).body.id;
    productId = (await t.post('/api/Product', { name: 'P', sku: 'p-1', price: 2, brandId, categoriesIds: [categoryId] }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  const compiled = () => t.api.database.statements.size;

  it('reads one record with the same SQL each time, compiled once, the text the query builder makes', async () => {
    const read = () => recordQueries(t, () => t.get(`/api/Product/${productId}`).expect(200));
    const first = await read();
    const size = compiled();
    const second = await read();
    expect(second).toEqual(first);
    expect(compiled()).toBe(size);
    const repo = t.api.repository('Product');
    const built = selectById(repo.sql, repo.model, { fields: repo.readable, id: productId }).toSQL().toNative().sql;
    expect(first[0]).toBe(built);
  });

  it('compiles another statement for another selection of fields, and reuses it', async () => {
    const read = (select: string) => recordQueries(t, () => t.get(`/api/Product/${productId}?select=${select}`).expect(200));
    const [name] = await read('name');
    const size = compiled();
    const [namePrice] = await read('name,price');
    expect(namePrice).not.toBe(name);
    expect(namePrice).toMatch(/["`]price["`]/);
    expect(name).not.toMatch(/["`]price["`]/);
    expect(compiled()).toBe(size + 1);
    expect((await read('name,price'))[0]).toBe(namePrice);
    expect(compiled()).toBe(size + 1);
  });

  it('writes the same columns with one statement, whatever the order of the body', async () => {
    const update = (body: object) => recordQueries(t, () => t.patch(`/api/Product/${productId}`, body).expect(200));
    const writes = (sql: string[]) => sql.filter((s) => /^(update|with)\b/i.test(s));
    const first = writes(await update({ price: 3, quantity: 1 }));
    const size = compiled();
    const second = writes(await update({ quantity: 2, price: 4 }));
    expect(second).toEqual(first);
    expect(compiled()).toBe(size);
    expect((await t.get(`/api/Product/${productId}`).expect(200)).body).toMatchObject({ price: 4, quantity: 2 });
  });

  it('reads on after another process changed the type of a column a prepared statement reads', async () => {
    if (kind !== 'postgres') return;
    const read = () => t.get(`/api/Product/${productId}`).expect(200);
    // Several connections of the pool prepare the statement.
    await Promise.all([read(), read(), read(), read()]);
    await t.api.database.knex.raw('alter table product alter column sku type varchar(300)');
    for (let i = 0; i < 6; i += 1) expect((await read()).body.sku).toBe('p-1');
    await Promise.all([read(), read(), read(), read()]);
  });

  it('shows the fields a role allows once the role changes, in the same process', async () => {
    const user = await userWithRole(t, { scopes: { Product: { read: 'all' } }, fields: { Product: { price: { read: false } } } });
    const before = (await user.get(`/api/Product/${productId}`).expect(200)).body;
    expect(before).not.toHaveProperty('price');
    expect((await user.get(`/api/Product/${productId}`).expect(200)).body).toEqual(before);
    const roleId = (await t.get(`/api/User/${user.user.id}`).expect(200)).body.rolesIds[0];
    await t.patch(`/api/Role/${roleId}`, { fields: { Product: { sku: { read: false } } } }).expect(200);
    const after = (await user.get(`/api/Product/${productId}`).expect(200)).body;
    expect(after).toHaveProperty('price', 4);
    expect(after).not.toHaveProperty('sku');
  });
});
