import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { whereNames } from './list-helpers';

// Expectations are computed here with fixed UTC offsets (zones without daylight saving time),
// independently of the server's time code.
const ZONES: [string | undefined, number][] = [
  [undefined, 0],
  ['UTC', 0],
  ['Pacific/Kiritimati', 14 * 60],
  ['Pacific/Pago_Pago', -11 * 60],
  ['Asia/Kolkata', 5 * 60 + 30],
];
const DAY = 86_400_000;
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const localDate = (ms: number, offsetMin: number) => iso(ms + offsetMin * 60_000).slice(0, 10);
const addDays = (date: string, days: number) => iso(Date.parse(`${date}T00:00:00Z`) + days * DAY).slice(0, 10);
const formatDateTime = (ms: number) => iso(Math.floor(ms / 1000) * 1000).slice(0, 19).replace('T', ' ');
const parseDateTime = (s: string) => Date.parse(`${s.replace(' ', 'T')}Z`);

type Op = [string, number?];
const DATE_OPS: Op[] = [['today'], ['past'], ['future'], ['lastXDays', 2], ['lastXDays', 0], ['nextXDays', 3], ['nextXDays', 0]];
const DATETIME_OPS: Op[] = [['today'], ['past'], ['future'], ['lastXDays', 1], ['lastXDays', 0], ['nextXDays', 2], ['nextXDays', 0]];

/** Whether a value matches an operator at `now` in a zone at `offset` minutes from UTC. */
function matches(field: 'releaseDate' | 'availableAt', value: string | null, [type, x = 0]: Op, now: number, offset: number): boolean {
  if (value === null) return false;
  const today = localDate(now, offset);
  const day = field === 'releaseDate' ? value : localDate(parseDateTime(value), offset);
  const instant = field === 'releaseDate' ? null : parseDateTime(value);
  switch (type) {
    case 'today':
      return day === today;
    case 'past':
      return instant === null ? day < today : instant < now;
    case 'future':
      return instant === null ? day > today : instant > now;
    case 'lastXDays':
      return day >= addDays(today, -x) && (instant === null ? day <= today : instant <= now);
    default:
      return day <= addDays(today, x) && (instant === null ? day >= today : instant >= now);
  }
}

interface Seed {
  name: string;
  releaseDate: string | null;
  availableAt: string | null;
}

describe.each(TEST_DBS)('relative date operators on %s', (kind) => {
  let t: TestApi;
  const seeds: Seed[] = [];

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    const now = Date.now();
    const today = localDate(now, 0);
    for (const k of [-10, -3, -2, -1, 0, 1, 2, 3, 10]) seeds.push({ name: `d${k}`, releaseDate: addDays(today, k), availableAt: null });
    for (const h of [-240, -72, -36, -20, -1, 1, 20, 36, 72, 240]) {
      seeds.push({ name: `t${h}h`, releaseDate: null, availableAt: formatDateTime(now + h * HOUR) });
    }
    // Local noon of yesterday, today and tomorrow in every zone.
    for (const [zone, offset] of ZONES.slice(1)) {
      for (const k of [-1, 0, 1]) {
        const local = addDays(localDate(now, offset), k);
        const noon = Date.parse(`${local}T12:00:00Z`) - offset * 60_000;
        seeds.push({ name: `n-${zone}-${k}`, releaseDate: null, availableAt: formatDateTime(noon) });
      }
    }
    seeds.push({ name: 'none', releaseDate: null, availableAt: null });
    for (const s of seeds) await t.post('/api/Product', s).expect(200);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    const run = (field: string, [type, x]: Op, zone?: string) => {
      const item: Record<string, unknown> = { type, attribute: field };
      if (x !== undefined) item.value = x;
      if (zone !== undefined) item.timeZone = zone;
      return whereNames(t, base, 'Product', [item]);
    };

    /**
     * Compares with the expectation at the moment of the request; should a day boundary pass
     * while the request runs (expectation before ≠ after), it runs again.
     */
    async function check(field: 'releaseDate' | 'availableAt', op: Op, zone: string | undefined, offset: number) {
      const expected = (now: number) => seeds.filter((s) => matches(field, s[field], op, now, offset)).map((s) => s.name).sort();
      for (let attempt = 0; attempt < 3; attempt++) {
        const before = expected(Date.now());
        let got: string[] | Error;
        try {
          got = await run(field, op, zone);
        } catch (error) {
          got = error as Error;
        }
        const after = expected(Date.now());
        if (JSON.stringify(before) !== JSON.stringify(after)) continue;
        if (got instanceof Error) throw got;
        expect(got).toEqual(before);
        return before;
      }
      throw new Error('a day boundary passed during every attempt');
    }

    const dateCases = ZONES.flatMap(([zone, offset]) => DATE_OPS.map((op) => [op[0], op[1] ?? '', zone ?? 'no zone', op, zone, offset] as const));
    it.each(dateCases)('%s %s on a date field (%s)', async (_t, _x, _z, op, zone, offset) => {
      const got = await check('releaseDate', op, zone, offset);
      expect(got.length).toBeGreaterThan(0);
      expect(got.every((n) => n.startsWith('d'))).toBe(true);
    });

    const dateTimeCases = ZONES.flatMap(([zone, offset]) => DATETIME_OPS.map((op) => [op[0], op[1] ?? '', zone ?? 'no zone', op, zone, offset] as const));
    it.each(dateTimeCases)('%s %s on a date-time field (%s)', async (_t, _x, _z, op, zone, offset) => {
      const got = await check('availableAt', op, zone, offset);
      // With 0 days the window may be empty (just after midnight, or just before).
      if (op[1] !== 0) expect(got.length).toBeGreaterThan(0);
      expect(got.some((n) => n.startsWith('d')) || got.includes('none')).toBe(false);
    });

    it('matches records days apart as expected, without a time zone', async () => {
      const has = (names: string[], yes: string[], no: string[]) => {
        expect(names).toEqual(expect.arrayContaining(yes));
        for (const n of no) expect(names).not.toContain(n);
      };
      has(await run('releaseDate', ['today']), ['d0'], ['d-3', 'd3', 'none']);
      has(await run('releaseDate', ['past']), ['d-3', 'd-10'], ['d0', 'd3', 'd10']);
      has(await run('releaseDate', ['future']), ['d3', 'd10'], ['d0', 'd-3', 'd-10']);
      has(await run('releaseDate', ['lastXDays', 3]), ['d-3', 'd0'], ['d-10', 'd3']);
      has(await run('releaseDate', ['nextXDays', 3]), ['d0', 'd3'], ['d-3', 'd10']);
      has(await run('availableAt', ['today']), ['n-UTC-0'], ['t-72h', 't72h', 'n-UTC--1', 'n-UTC-1']);
      has(await run('availableAt', ['past']), ['t-1h', 't-72h', 't-240h'], ['t1h', 't72h', 'none']);
      has(await run('availableAt', ['future']), ['t1h', 't72h', 't240h'], ['t-1h', 't-72h']);
      has(await run('availableAt', ['lastXDays', 3]), ['t-1h', 't-72h'], ['t-240h', 't1h']);
      has(await run('availableAt', ['nextXDays', 3]), ['t1h', 't72h'], ['t240h', 't-1h']);
    });

    it('takes the day count in both forms as a number or as text', async () => {
      const json = await whereNames(t, base, 'Product', [{ type: 'lastXDays', attribute: 'releaseDate', value: '3' }]);
      expect(json).toEqual(await run('releaseDate', ['lastXDays', 3]));
      expect(json).toContain('d-3');
    });
  });
});
