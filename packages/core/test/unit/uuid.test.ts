import { uuidv7 } from '../../src/util/uuid';

describe('uuidv7', () => {
  it('makes distinct version 7 ids that sort in creation order, across refills of its random pool', () => {
    const ids = Array.from({ length: 2000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('starts with the current time in milliseconds', () => {
    const before = Date.now();
    const ms = parseInt(uuidv7().replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now() + 1);
  });
});
