import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { expectQueryError, expectWhereError, jsonWhere, list } from './list-helpers';

const cond = (type: string, attribute: string, value?: unknown) => (value === undefined ? { type, attribute } : { type, attribute, value });

// Conditions that are well-formed JSON but wrong: each must be 400 CORE_INVALID_QUERY, never 500.
const BAD_CONDITIONS: [string, unknown[]][] = [
  ['unknown field', [cond('equals', 'nope', 'x')]],
  ['unknown field in a nested group', [{ type: 'or', value: [cond('equals', 'name', 'a'), cond('isNull', 'nope')] }]],
  ['field by its column name', [cond('equals', 'release_date', '2024-01-01')]],
  ['text for an int', [cond('greaterThan', 'quantity', 'abc')]],
  ['a fraction for an int', [cond('equals', 'quantity', '1.5')]],
  ['hex for an int', [cond('equals', 'quantity', '0x10')]],
  ['an int out of range', [cond('equals', 'quantity', '99999999999')]],
  ['blank for a number', [cond('lessThan', 'price', ' ')]],
  ['Infinity for a float', [cond('lessThan', 'price', 'Infinity')]],
  ['NaN for a float', [cond('equals', 'price', 'NaN')]],
  ['an impossible date', [cond('equals', 'releaseDate', '2024-02-30')]],
  ['a date-time for a date', [cond('equals', 'releaseDate', '2024-02-01 10:00:00')]],
  ['words for a date-time', [cond('greaterThan', 'availableAt', 'yesterday')]],
  ['an impossible time', [cond('equals', 'availableAt', '2024-01-01 24:00:00')]],
  ['maybe for a bool', [cond('equals', 'isActive', 'maybe')]],
  ['a list for equals', [cond('equals', 'name', ['a', 'b'])]],
  ['no value for equals', [cond('equals', 'name')]],
  ['one bound for between', [cond('between', 'quantity', [1])]],
  ['three bounds for between', [cond('between', 'quantity', [1, 2, 3])]],
  ['a bad bound for between', [cond('between', 'price', [1, 'x'])]],
  ['a bad item for in', [cond('in', 'quantity', [1, 'two'])]],
  ['like on an int', [cond('like', 'quantity', '1%')]],
  ['contains on a bool', [cond('contains', 'isActive', 'tr')]],
  ['startsWith on a date', [cond('startsWith', 'releaseDate', '2024')]],
  ['like without a value', [cond('like', 'name')]],
  ['greaterThan on a bool', [cond('greaterThan', 'isActive', false)]],
  ['isTrue on text', [cond('isTrue', 'name')]],
  ['isFalse on an int', [cond('isFalse', 'quantity')]],
  ['equals on a multiEnum', [cond('equals', 'labels', 'new')]],
  ['in on a JSON object', [cond('in', 'specs', ['a'])]],
  ['equals on a multiple link', [cond('equals', 'categories', 'x')]],
  ['isNull on a multiple link', [cond('isNull', 'categories')]],
  ['today on text', [cond('today', 'name')]],
  ['past on an int', [cond('past', 'quantity')]],
  ['lastXDays without a number', [cond('lastXDays', 'releaseDate')]],
  ['lastXDays with text', [cond('lastXDays', 'releaseDate', 'abc')]],
  ['nextXDays negative', [cond('nextXDays', 'availableAt', -2)]],
  ['nextXDays a fraction', [cond('nextXDays', 'availableAt', '1.5')]],
  ['lastXDays beyond any calendar', [cond('lastXDays', 'releaseDate', 1_000_000_000)]],
  ['nextXDays beyond any calendar', [cond('nextXDays', 'availableAt', '9007199254740991')]],
  ['unknown time zone', [{ ...cond('today', 'releaseDate'), timeZone: 'Mars/Olympus_Mons' }]],
  ['isAttribute neither true nor false', [{ ...cond('equals', 'name', 'x'), isAttribute: 'yes' }]],
  ['isAttribute a number', [{ ...cond('equals', 'name', 'x'), isAttribute: 2 }]],
  ['empty time zone', [{ ...cond('today', 'availableAt'), timeZone: '' }]],
  ['time zone list', [{ ...cond('past', 'availableAt'), timeZone: ['UTC'] }]],
  ['linkedWith on text', [cond('linkedWith', 'name', ['x'])]],
  ['isLinked on an int', [cond('isLinked', 'quantity')]],
  ['arrayAnyOf on an enum', [cond('arrayAnyOf', 'color', ['red'])]],
  ['arrayNoneOf on text', [cond('arrayNoneOf', 'name', ['x'])]],
  ['no attribute', [{ type: 'equals', value: 'x' }]],
  ['an attribute that is a list', [{ type: 'equals', attribute: ['name'], value: 'x' }]],
  ['an attribute that is not defined', [{ type: 'equals', attribute: 'x', value: 'y', isAttribute: true }]],
  ['no type', [{ attribute: 'name', value: 'x' }]],
  ['a type that is a list', [{ type: ['equals'], attribute: 'name', value: 'x' }]],
  ['an empty or', [{ type: 'or', value: [] }]],
  ['an and of no items', [{ type: 'and' }]],
  ['a not of text', [{ type: 'not', value: ['name'] }]],
  ['NUL in a value', [cond('equals', 'name', 'a\u0000b')]],
  ['NUL in a pattern', [cond('contains', 'name', 'a\u0000')]],
  ['a value of 10001 characters', [cond('startsWith', 'name', 'x'.repeat(10_001))]],
];

describe.each(TEST_DBS)('where errors on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    await t.post('/api/Product', { name: 'one', quantity: 1, releaseDate: '2024-01-01' }).expect(200);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    it('answers an unknown operator with 400 CORE_INVALID_QUERY naming it', async () => {
      for (const where of [
        'where[0][type]=fooBar&where[0][attribute]=name&where[0][value]=x',
        jsonWhere([cond('fooBar', 'name', 'x')]),
      ]) {
        const res = await t.get(`${base}/Product?${where}`);
        expectQueryError(res);
        expect(res.body.error.message).toContain('fooBar');
        expect(res.body.error.details).toEqual({ operator: 'fooBar' });
      }
      await expectWhereError(t, base, 'Product', [{ type: 'and', value: [cond('EQUALS', 'name', 'x')] }]);
    });

    it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'])(
      'treats the operator %s as unknown, not as an inherited property',
      async (type) => {
        await expectWhereError(t, base, 'Product', [cond(type, 'name', 'one')]);
      },
    );

    it.each([
      ['where[0][__proto__][type]=equals&where[0][__proto__][attribute]=name&where[0][__proto__][value]=x', '__proto__'],
      ['maxSize[__proto__]=5', '__proto__'],
      ['where[constructor][type]=equals', 'constructor'],
      ['where[0][type]=equals&where[0][attribute]=name&where[0][value][hasOwnProperty]=x', 'hasOwnProperty'],
    ])('refuses a parameter named after a property of every object (%s) instead of dropping it', async (query, name) => {
      const res = await t.get(`${base}/Product?${query}`);
      expectQueryError(res);
      expect(res.body.error.message).toContain(`'${name}'`);
    });

    it('answers an unknown field with 400 naming it', async () => {
      const res = await t.get(`${base}/Product?${jsonWhere([cond('equals', 'nope', 'x')])}`);
      expectQueryError(res);
      expect(res.body.error.details).toEqual({ field: 'nope' });
    });

    it.each(BAD_CONDITIONS)('answers 400 for %s', async (_what, items) => {
      await expectWhereError(t, base, 'Product', items);
    });

    it.each([
      ['not JSON', 'where=%5B%7B'],
      ['a JSON number', 'where=5'],
      ['JSON null', 'where=null'],
      ['a JSON string', `where=${encodeURIComponent('"equals"')}`],
      ['a list of strings', `where=${encodeURIComponent('["equals"]')}`],
      ['a list of lists', `where=${encodeURIComponent('[[{"type":"isNull","attribute":"name"}]]')}`],
      ['bracket items without keys', 'where[]=equals&where[]=name'],
      ['an item that is text', 'where[0]=equals'],
    ])('answers 400 for a where that is %s', async (_what, query) => {
      expectQueryError(await t.get(`${base}/Product?${query}`));
    });

    it('a trailing backslash in a like pattern matches a backslash and is no error', async () => {
      const body = await list(t, `${base}/Product?${jsonWhere([cond('like', 'name', 'on\\')])}`);
      expect(body).toEqual({ total: 0, list: [] });
      const notLike = await list(t, `${base}/Product?${jsonWhere([cond('notLike', 'name', 'one\\')])}`);
      expect(notLike.total).toBe(1);
    });

    it('answers deep nesting without a server error: 20 levels, and 400 beyond', async () => {
      let item: unknown = cond('equals', 'name', 'one');
      for (let i = 0; i < 20; i++) item = { type: i % 2 ? 'and' : 'or', value: [item] };
      const body = await list(t, `${base}/Product?${jsonWhere([item])}`);
      expect(body.total).toBe(1);
      for (let i = 20; i < 60; i++) item = { type: i % 2 ? 'and' : 'or', value: [item] };
      const deep = await t.get(`${base}/Product?${jsonWhere([item])}`).expect(400);
      expect(deep.body.error.code).toBe('CORE_INVALID_QUERY');
    });
  });
});
