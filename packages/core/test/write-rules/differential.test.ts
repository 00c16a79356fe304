import { GENERATIONS } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { RULE_CASES, STORED, type Refusal, type RuleCase } from './cases';
import { writeRoutes, type Mode, type Outcome, type WriteRoute } from './routes';
import { FULL, startWorld, type World } from './world';

/**
 * CONTRACT §15: one rule set for every write. Each rule of `cases.ts` is sent through every write
 * route; every route must give the same answer (the same status, code and message, or an upsert
 * item `Failed` with the same message) and a refused write must store nothing.
 */
jest.setTimeout(120_000);

/**
 * What the admin reads of the records a write could touch: the written record, the category (a
 * pair is in its list too) and the counts of every type.
 */
async function snapshot(w: World, id?: string): Promise<unknown> {
  const counts: Record<string, number> = {};
  for (const entity of ['Product', 'Brand', 'ExtensibleEnumOption']) counts[entity] = (await w.t.get(`/api/${entity}?totalOnly=true`).expect(200)).body.total;
  const category = await w.t.get(`/api/Category/${w.category}`).expect(200);
  return { counts, record: id ? (await w.t.get(`/api/Product/${id}`).expect(200)).body : undefined, category: [category.headers.etag, category.body] };
}

/** How an outcome differs from the refusal expected (only what the route tells is compared). */
function refusalMismatch(outcome: Outcome, expected: Refusal): string | undefined {
  if (outcome.stored) return 'stored the write';
  const seen = { status: outcome.status ?? expected.status, code: outcome.code ?? expected.code, message: outcome.message };
  return JSON.stringify(seen) === JSON.stringify(expected) ? undefined : `answered ${JSON.stringify(outcome)}`;
}

interface Run {
  worlds: { batch: World; single: World };
  route: WriteRoute;
  mode: Mode;
}

/** Sends one case through one route; answers what went wrong, if anything. */
async function runCase(rule: RuleCase, { worlds, route, mode }: Run): Promise<string | undefined> {
  const world = route.singlePath ? worlds.single : worlds.batch;
  const user = await world.as(rule.role ?? FULL);
  const id = mode === 'update' ? (await world.t.post('/api/Product', STORED).expect(200)).body.id : undefined;
  const before = await snapshot(world, id);
  const outcome = await route.run({ world, user, mode, id, body: rule.body(world, mode) });
  if (typeof rule.expect === 'function') {
    const mismatch = refusalMismatch(outcome, rule.expect(world));
    if (mismatch) return mismatch;
    const after = await snapshot(world, id);
    return JSON.stringify(after) === JSON.stringify(before) ? undefined : 'refused, but the stored records changed';
  }
  if (!outcome.stored) return `refused: ${JSON.stringify(outcome)}`;
  const writtenId = id ?? (outcome.record?.id as string);
  await rule.expect.stored((await world.t.get(`/api/Product/${writtenId}`).expect(200)).body, world);
  return undefined;
}

describe.each(TEST_DBS)('one rule set for every write on %s', (kind) => {
  let worlds: Run['worlds'];
  beforeAll(async () => {
    // The single-path instance differs only by a write hook on Product.
    worlds = { batch: await startWorld(kind), single: await startWorld(kind, { singlePath: true }) };
  });
  afterAll(async () => {
    await worlds?.single.t.close();
    await worlds?.batch.t.close();
  });

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it.each(RULE_CASES.map((c) => [c.rule, c] as const))('%s', async (_rule, rule) => {
      const problems: string[] = [];
      for (const route of writeRoutes(gen, base)) {
        if (rule.upsertOnly && !route.upsert) continue;
        for (const mode of rule.modes.filter((m) => route.modes.includes(m))) {
          if (route.takes && !route.takes(rule.body(worlds.batch, mode))) continue;
          const problem = await runCase(rule, { worlds, route, mode });
          if (problem) problems.push(`${route.name} (${mode}): ${problem}`);
        }
      }
      expect(problems).toEqual([]);
    });
  });
});
