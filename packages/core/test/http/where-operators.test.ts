import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { whereNames } from './list-helpers';

// Every test reads this fixed set of products; `name` identifies a record.
const PRODUCTS = [
  { name: 'w1', sku: 'A-100', description: 'Discount 50% off', price: 10.5, quantity: 1, isActive: true, color: 'red', releaseDate: '2024-01-10', availableAt: '2024-01-10 08:00:00' },
  { name: 'w2', sku: 'A-200', description: 'Discount 50 units', price: 20, quantity: 5, isActive: false, color: 'green', releaseDate: '2024-02-20', availableAt: '2024-02-20 23:59:59' },
  { name: 'w3', sku: 'B_100', description: '50x zoom', price: 30.25, quantity: 10, isActive: true, color: 'blue', releaseDate: '2024-03-01', availableAt: '2024-03-01 00:00:00' },
  { name: 'w4', sku: 'BX100', description: '5000 pieces', isActive: false },
  { name: 'w5', price: 20, quantity: 5, isActive: true, color: 'red', releaseDate: '2024-02-20', availableAt: '2024-02-21 00:00:00' },
  { name: 'w6', sku: 'a-300', description: 'Plain_text here', price: 0, quantity: 0, isActive: false, color: 'blue', releaseDate: '2023-12-31', availableAt: '2023-12-31 23:00:00' },
  { name: 'w7', description: 'back\\slash\\', quantity: -3, isActive: true },
];
const ALL = PRODUCTS.map((p) => p.name);
const cond = (type: string, attribute: string, value?: unknown) => (value === undefined ? { type, attribute } : { type, attribute, value });

// [operator, attribute, value, expected names]
const CASES: [string, string, unknown, string[]][] = [
  ['equals', 'quantity', 5, ['w2', 'w5']],
  ['equals', 'quantity', '-3', ['w7']],
  ['equals', 'name', 'w3', ['w3']],
  ['equals', 'color', 'red', ['w1', 'w5']],
  ['equals', 'price', 0, ['w6']],
  ['equals', 'price', '10.5', ['w1']],
  ['equals', 'releaseDate', '2024-02-20', ['w2', 'w5']],
  ['equals', 'availableAt', '2024-03-01 00:00:00', ['w3']],
  ['equals', 'availableAt', '2024-03-01', ['w3']],
  ['equals', 'availableAt', '2024-03-01T01:00:00+01:00', ['w3']],
  ['equals', 'isActive', true, ['w1', 'w3', 'w5', 'w7']],
  ['equals', 'isActive', 'false', ['w2', 'w4', 'w6']],
  ['notEquals', 'quantity', 5, ['w1', 'w3', 'w4', 'w6', 'w7']],
  ['notEquals', 'sku', 'A-100', ['w2', 'w3', 'w4', 'w5', 'w6', 'w7']],
  ['notEquals', 'color', 'red', ['w2', 'w3', 'w4', 'w6', 'w7']],
  ['notEquals', 'isActive', true, ['w2', 'w4', 'w6']],
  ['greaterThan', 'quantity', 5, ['w3']],
  ['greaterThan', 'price', 10.5, ['w2', 'w3', 'w5']],
  ['greaterThan', 'releaseDate', '2024-02-20', ['w3']],
  ['greaterThan', 'availableAt', '2024-02-20 23:59:59', ['w3', 'w5']],
  ['lessThan', 'quantity', 1, ['w6', 'w7']],
  ['lessThan', 'releaseDate', '2024-01-01', ['w6']],
  ['lessThan', 'availableAt', '2024-01-01', ['w6']],
  ['greaterThanOrEquals', 'quantity', 5, ['w2', 'w3', 'w5']],
  ['greaterThanOrEquals', 'availableAt', '2024-02-21T01:00:00+01:00', ['w3', 'w5']],
  ['lessThanOrEquals', 'quantity', 1, ['w1', 'w6', 'w7']],
  ['lessThanOrEquals', 'price', '20', ['w1', 'w2', 'w5', 'w6']],
  ['between', 'quantity', [0, 5], ['w1', 'w2', 'w5', 'w6']],
  ['between', 'quantity', [-3, -3], ['w7']],
  ['between', 'quantity', [6, 2], []],
  ['between', 'price', [10.5, 20], ['w1', 'w2', 'w5']],
  ['between', 'releaseDate', ['2024-01-10', '2024-02-20'], ['w1', 'w2', 'w5']],
  ['between', 'availableAt', ['2024-01-10 08:00:00', '2024-02-21 00:00:00'], ['w1', 'w2', 'w5']],
  ['in', 'color', ['red', 'blue'], ['w1', 'w3', 'w5', 'w6']],
  ['in', 'quantity', [1, 10], ['w1', 'w3']],
  ['in', 'name', ['w4'], ['w4']],
  ['in', 'releaseDate', ['2024-01-10', '2023-12-31'], ['w1', 'w6']],
  ['in', 'color', [], []],
  ['notIn', 'color', ['red'], ['w2', 'w3', 'w4', 'w6', 'w7']],
  ['notIn', 'quantity', [5, 10, 0], ['w1', 'w4', 'w7']],
  ['notIn', 'color', [], ALL],
  ['isNull', 'quantity', undefined, ['w4']],
  ['isNull', 'sku', undefined, ['w5', 'w7']],
  ['isNull', 'releaseDate', undefined, ['w4', 'w7']],
  ['isNotNull', 'quantity', undefined, ['w1', 'w2', 'w3', 'w5', 'w6', 'w7']],
  ['isNotNull', 'description', undefined, ['w1', 'w2', 'w3', 'w4', 'w6', 'w7']],
  ['isTrue', 'isActive', undefined, ['w1', 'w3', 'w5', 'w7']],
  ['isFalse', 'isActive', undefined, ['w2', 'w4', 'w6']],
  ['like', 'sku', 'A-%', ['w1', 'w2', 'w6']],
  ['like', 'sku', 'B_100', ['w3', 'w4']],
  ['like', 'description', '%50%', ['w1', 'w2', 'w3', 'w4']],
  ['like', 'description', '%50\\%%', ['w1']],
  ['like', 'description', '%\\', ['w7']],
  ['like', 'name', 'w1', ['w1']],
  ['notLike', 'sku', 'A-%', ['w3', 'w4', 'w5', 'w7']],
  ['notLike', 'description', '%zoom', ['w1', 'w2', 'w4', 'w5', 'w6', 'w7']],
  ['contains', 'description', '50%', ['w1']],
  ['contains', 'description', '50', ['w1', 'w2', 'w3', 'w4']],
  ['contains', 'description', '_', ['w6']],
  ['contains', 'description', 'DISCOUNT', ['w1', 'w2']],
  ['contains', 'description', 'slash\\', ['w7']],
  ['contains', 'sku', 'B_1', ['w3']],
  ['contains', 'description', '%', ['w1']],
  ['notContains', 'description', '50', ['w5', 'w6', 'w7']],
  ['notContains', 'description', '50%', ['w2', 'w3', 'w4', 'w5', 'w6', 'w7']],
  ['notContains', 'sku', '_', ['w1', 'w2', 'w4', 'w5', 'w6', 'w7']],
  ['startsWith', 'sku', 'A-', ['w1', 'w2', 'w6']],
  ['startsWith', 'description', '%', []],
  ['startsWith', 'description', '_', []],
  ['startsWith', 'description', 'discount 50%', ['w1']],
  ['endsWith', 'sku', '100', ['w1', 'w3', 'w4']],
  ['endsWith', 'sku', '_100', ['w3']],
  ['endsWith', 'description', '%', []],
  ['endsWith', 'description', 'here', ['w6']],
];

describe.each(TEST_DBS)('where operators on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    for (const p of PRODUCTS) await t.post('/api/Product', p).expect(200);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    const names = (items: unknown[]) => whereNames(t, base, 'Product', items);

    it.each(CASES)('%s on %s with %j', async (type, attribute, value, expected) => {
      expect(await names([cond(type, attribute, value)])).toEqual(expected);
    });

    it('ANDs top-level items', async () => {
      expect(await names([cond('greaterThan', 'quantity', 0), cond('equals', 'color', 'red')])).toEqual(['w1', 'w5']);
      expect(await names([cond('isTrue', 'isActive'), cond('isNull', 'sku'), cond('isNull', 'color')])).toEqual(['w7']);
      expect(await names([cond('equals', 'color', 'red'), cond('equals', 'color', 'blue')])).toEqual([]);
    });

    it('or matches any item, and any item', async () => {
      expect(await names([{ type: 'or', value: [cond('equals', 'quantity', 1), cond('equals', 'color', 'green')] }])).toEqual(['w1', 'w2']);
      expect(await names([{ type: 'or', value: [cond('equals', 'name', 'w4')] }])).toEqual(['w4']);
      const and = [{ type: 'and', value: [cond('isTrue', 'isActive'), cond('greaterThan', 'quantity', 0)] }];
      expect(await names(and)).toEqual(['w1', 'w3', 'w5']);
    });

    it('not ANDs its items, then negates them', async () => {
      expect(await names([{ type: 'not', value: [cond('in', 'name', ['w1', 'w2'])] }])).toEqual(['w3', 'w4', 'w5', 'w6', 'w7']);
      const both = [{ type: 'not', value: [cond('isTrue', 'isActive'), cond('greaterThan', 'quantity', 0)] }];
      expect(await names(both)).toEqual(['w2', 'w4', 'w6', 'w7']);
      const twice = [{ type: 'not', value: [{ type: 'not', value: [cond('equals', 'color', 'blue')] }] }];
      expect(await names(twice)).toEqual(['w3', 'w6']);
    });

    it('nests groups three levels deep, in both forms', async () => {
      const where = [
        {
          type: 'or',
          value: [
            { type: 'and', value: [cond('equals', 'color', 'red'), cond('greaterThan', 'quantity', 1)] },
            { type: 'not', value: [{ type: 'or', value: [cond('in', 'name', ['w1', 'w2', 'w3', 'w4', 'w5']), cond('isTrue', 'isActive')] }] },
          ],
        },
        cond('isNotNull', 'quantity'),
      ];
      expect(await names(where)).toEqual(['w5', 'w6']);
    });

    it('reads the bracket form written by hand, brackets encoded or not', async () => {
      const get = async (q: string) => {
        const res = await t.get(`${base}/Product?select=name&${q}`).expect(200);
        return (res.body.list as { name: string }[]).map((r) => r.name).sort();
      };
      expect(await get('where[0][type]=in&where[0][attribute]=color&where[0][value][]=red&where[0][value][]=green')).toEqual(['w1', 'w2', 'w5']);
      expect(await get('where%5B0%5D%5Btype%5D=equals&where%5B0%5D%5Battribute%5D=name&where%5B0%5D%5Bvalue%5D=w2')).toEqual(['w2']);
      expect(await get('where[0][type]=in&where[0][attribute]=color&where[0][value][0]=red&where[0][value][1]=blue')).toEqual(['w1', 'w3', 'w5', 'w6']);
      expect(await get('where[0][type]=in&where[0][attribute]=color&where[0][value]=')).toEqual([]);
      expect(await get('where[0][type]=notIn&where[0][attribute]=color&where[0][value]=')).toEqual(ALL);
      expect(await get('where[0][type]=or&where[0][value][0][type]=equals&where[0][value][0][attribute]=name&where[0][value][0][value]=w1' +
        '&where[0][value][1][type]=isNull&where[0][value][1][attribute]=sku')).toEqual(['w1', 'w5', 'w7']);
      // One nested item without an index is a list of one; `not` keeps the records without a color.
      expect(await get('where[0][type]=not&where[0][value][type]=equals&where[0][value][attribute]=color&where[0][value][value]=red'))
        .toEqual(['w2', 'w3', 'w4', 'w6', 'w7']);
      // A JSON object instead of a list is a list of one.
      expect(await get(`where=${encodeURIComponent(JSON.stringify(cond('equals', 'name', 'w6')))}`)).toEqual(['w6']);
    });
  });
});
