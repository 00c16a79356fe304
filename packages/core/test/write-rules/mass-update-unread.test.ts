import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole } from '../../../../test/support/users';

/**
 * A role that may edit but not read an entity type: an update of a record is 403 whether the
 * record exists or not, and a mass update answers the same for each id (no answer tells which ids
 * name records).
 */
describe.each(TEST_DBS)('updates by a role that may not read the type, on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('answers an id that names a record as one that does not (generation %s)', async (_g, base) => {
    const user = await userWithRole(t, { scopes: { Product: { create: false, read: 'no', edit: 'all', delete: 'no' } } });
    const stored = (await t.post(`${base}/Product`, { name: 'Unread' }).expect(200)).body.id as string;
    const refusals = [];
    for (const id of [stored, 'no-such-product']) refusals.push((await user.patch(`${base}/Product/${id}`, { quantity: 1 })).body.error);
    expect(refusals).toEqual([refusals[0], refusals[0]]);
    expect(refusals[0]).toMatchObject({ code: 'CORE_FORBIDDEN' });
    const mass = (await user.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [stored, 'no-such-product'], values: { quantity: 1 } }).expect(200)).body;
    expect(mass).toEqual({
      updated: 0,
      errors: [
        { id: stored, code: 'CORE_FORBIDDEN', message: refusals[0].message },
        { id: 'no-such-product', code: 'CORE_FORBIDDEN', message: refusals[0].message },
      ],
    });
    expect((await t.get(`${base}/Product/${stored}`).expect(200)).body.quantity).toBeNull();
  });
});
