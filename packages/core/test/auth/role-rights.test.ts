import type { Rights, RoleData } from '../../src/auth/access-control';
import { AccessService } from '../../src/auth/access-service';

const role = (id: string, read: 'all' | 'own' | 'no', hidden: string[] = []): RoleData => ({
  id,
  scopes: { Product: { read } },
  fields: { Product: Object.fromEntries(hidden.map((f) => [f, { read: false }])) },
});

const user = (rolesIds: string[]) => ({ id: `u-${rolesIds.join('-')}`, userName: 'u', name: 'U', isAdmin: false, rolesIds });

describe('rights shared by the users of a set of roles', () => {
  let stored: Map<string, RoleData>;
  let loads: number;
  let now: number;
  let service: AccessService;
  const fields = ['name', 'price', 'sku'];
  let derivations: number;
  const readable = (list: string[], rights: Rights) => {
    derivations += 1;
    return list.filter((f) => rights.field('Product', f).read);
  };

  beforeEach(() => {
    stored = new Map([
      ['a', role('a', 'all', ['price'])],
      ['b', role('b', 'own')],
    ]);
    loads = 0;
    derivations = 0;
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    service = new AccessService(async (ids) => {
      loads += 1;
      // A load reads the role anew: new data, as from the database.
      return ids.map((id) => stored.get(id)).filter((r): r is RoleData => !!r).map((r) => structuredClone(r));
    }, 5000);
  });
  afterEach(() => jest.restoreAllMocks());

  it('derives a decision once for every request of every user with the same roles', async () => {
    const first = await service.forUser(user(['a']));
    const second = await service.forUser({ ...user(['a']), id: 'another user' });
    expect(first.derived(fields, readable)).toEqual(['name', 'sku']);
    expect(second.derived(fields, readable)).toBe(first.derived(fields, readable));
    expect(derivations).toBe(1);
    expect(first.scope('Product')).toBe(second.scope('Product'));
    expect(loads).toBe(1);
  });

  it('keeps the decisions of each set of roles apart, whatever the order of the ids', async () => {
    const a = await service.forUser(user(['a']));
    const ab = await service.forUser(user(['a', 'b']));
    const ba = await service.forUser(user(['b', 'a']));
    expect(a.derived(fields, readable)).toEqual(['name', 'sku']);
    expect(ab.derived(fields, readable)).toEqual(fields);
    expect(ba.derived(fields, readable)).toBe(ab.derived(fields, readable));
    expect(derivations).toBe(2);
    expect(ab.scope('Product').read).toBe('all');
  });

  it('derives again once a role changed (forgotten through the cache events)', async () => {
    expect((await service.forUser(user(['a']))).derived(fields, readable)).toEqual(['name', 'sku']);
    stored.set('a', role('a', 'all', ['sku']));
    service.forgetRole('a');
    expect((await service.forUser(user(['a']))).derived(fields, readable)).toEqual(['name', 'price']);
    expect(derivations).toBe(2);
  });

  it('derives again once the roles were read anew after the cache time', async () => {
    expect((await service.forUser(user(['a']))).derived(fields, readable)).toEqual(['name', 'sku']);
    stored.set('a', role('a', 'no'));
    now += 4000;
    expect((await service.forUser(user(['a']))).derived(fields, readable)).toEqual(['name', 'sku']);
    now += 2000;
    const later = await service.forUser(user(['a']));
    expect(later.derived(fields, readable)).toEqual([]);
    expect(later.scope('Product').read).toBe('no');
    expect(loads).toBe(2);
  });

  it('lets admins read everything, deriving for them without keeping it', async () => {
    const admin = await service.forUser({ ...user([]), isAdmin: true });
    expect(admin.derived(fields, readable)).toEqual(fields);
    expect(admin.unrestricted).toBe(true);
    expect(loads).toBe(0);
  });
});
