import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { FieldModel } from '../definition/normalize';
import { isValidId } from '../definition/validate-record';
import { notFound } from '../errors';
import { hiddenKeys, type PresentPlan } from '../present';
import type { UserAccess } from '../auth/access-control';
import { selectFields } from './field-selection';
import { runPrepared } from '../sql/prepared';
import { loadMultipleLinks, type LinkScopes } from '../sql/link-rows';
import { decodeRows, outputKeys, selectById, shapeRecord, VERSION_KEY } from '../sql/read-query';
import type { ReadPlan, ReadShape } from './read-plan';
import { withRecordVersion } from './version';
import type { Repository } from './repository';
import { rowFilter, type RowFilter } from './row-rules';
import { isOwn } from './write-rules';
import { linkScopes } from './link-scopes';
import { nameLinksFor } from './link-names';

/** The fields a read returns, and `extra` ones read for the present stage (kept under hidden keys). */
interface ReadFields extends ReadShape {
  /** Only a record these row rules keep. */
  within?: RowFilter;
  /** The linked records some lists show (see `linkScopes`). */
  scopes?: LinkScopes;
}

/** Decodes rows into records of `fields`, plus the keys of `extra` fields (read for the present stage). */
export async function hydrate(repo: Repository, rows: Record<string, unknown>[], shape: ReadShape & { scopes?: LinkScopes }): Promise<ApiRecord[]> {
  return hydrateWith(repo, rows, { plan: repo.readPlan(shape), scopes: shape.scopes });
}

async function hydrateWith(repo: Repository, rows: Record<string, unknown>[], { plan, scopes }: { plan: ReadPlan; scopes?: LinkScopes }): Promise<ApiRecord[]> {
  decodeRows(repo.env.database.dialect, plan.decoded, rows);
  await loadMultipleLinks(repo.sql, { fields: plan.read, records: rows as ApiRecord[], scopes });
  // The rows of one statement share their keys: when the first one's are the record's, in order,
  // every row is its record as it is (no copy per row).
  if (rows.length > 0 && hasKeysInOrder(rows[0], plan.keys)) return rows as ApiRecord[];
  return rows.map((row) => shapeRecord(plan.keys, row));
}

function hasKeysInOrder(row: Record<string, unknown>, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in row) if (key !== keys[i++]) return false;
  return i === keys.length;
}

/**
 * The live record with this id (one that meets `within`, when given), or undefined. Without row
 * rules its select is compiled once per shape.
 */
export async function findById(repo: Repository, id: string, read: ReadFields = { fields: repo.readable }): Promise<ApiRecord | undefined> {
  if (!isValidId(id)) return undefined;
  const { sql } = repo;
  return repo.translated(async () => {
    const plan = repo.readPlan(read);
    let rows: Record<string, unknown>[];
    if (read.within) {
      const query = selectById(sql, repo.model, { fields: plan.read, names: read.names, id });
      read.within(query);
      rows = await query;
    } else {
      rows = await runPrepared(sql, plan.byId(), { id });
    }
    return recordOf(repo, rows, { plan, scopes: read.scopes });
  });
}

/** The record of the rows `plan` selected (with its version), or undefined for none. */
async function recordOf(repo: Repository, rows: Record<string, unknown>[], read: { plan: ReadPlan; scopes?: LinkScopes }): Promise<ApiRecord | undefined> {
  if (rows.length === 0) return undefined;
  const version = Number(rows[0][VERSION_KEY]);
  const [record] = await hydrateWith(repo, rows, read);
  return withRecordVersion(record, version);
}

/**
 * A record the caller may see, else 404 (no existence oracle for `own` and row rules); 403
 * without read rights. `present` fields (for the present stage) stay in the record.
 */
export async function visibleRecord(
  repo: Repository,
  ctx: RequestContext,
  { id, fields = repo.readable, present = [], names }: { id: string; fields?: FieldModel[]; present?: readonly FieldModel[]; names?: false },
): Promise<ApiRecord> {
  const { scope } = await repo.guard.scope(ctx, 'read');
  // Ownership is judged on createdBy / assignedUser even when the caller selected neither.
  const owners = scope.read === 'own' ? repo.ownerFields : [];
  const extra = [...present, ...owners.filter((f) => !fields.includes(f) && !present.includes(f))];
  const scopes = await linkScopes(repo, ctx, fields);
  const record = await findById(repo, id, { fields, extra, names, within: await rowFilter(repo, ctx), scopes });
  if (!record || (scope.read === 'own' && !isOwn(ctx, record))) throw notFound(repo.model.name, id);
  if (extra.length > present.length) {
    const keep = new Set([...outputKeys(fields), ...hiddenKeys(present, fields)]);
    for (const key of Object.keys(record)) if (!keep.has(key)) delete record[key];
  }
  return record;
}

/** One live record; 404 when it does not exist, is deleted, or is not the user's under `own`. */
export async function getRecord<TRecord extends ApiRecord>(
  repo: Repository<TRecord>,
  ctx: RequestContext,
  { id, select }: { id: string; select?: readonly string[] },
): Promise<TRecord> {
  const { access } = await repo.guard.scope(ctx, 'read');
  const fields = repo.guard.readable(access, selectFields(repo, select), !!select?.length);
  const plan = repo.env.presenter.plan({ ctx, model: repo.model, kind: 'read', fields });
  const record = await visibleRecord(repo, ctx, { id, fields, present: plan?.extra });
  await nameLinksFor(repo, ctx.shownTo ?? access, [record]);
  await repo.env.hooks.run('afterRead', { ctx, model: repo.model, id, record });
  await repo.env.attributes?.present(ctx, { model: repo.model, records: [record] }, { mode: 'single' });
  await plan?.run([record], { access });
  return record as TRecord;
}

/**
 * What the answer of a create or an update reads and shows. It depends on the caller and the
 * entity type, not on the record: it is worked out before the write, whose own statement may
 * then read the answer (`readBack`).
 */
export interface WriteAnswerPlan {
  access: UserAccess;
  /** The present stage of the answer, if any, and the fields it reads beside the readable ones. */
  present?: PresentPlan;
  extra: readonly FieldModel[];
  /** The linked records some lists show (see `linkScopes`). */
  scopes?: LinkScopes;
  /** The select of the answer: every readable field, and those the present stage reads. */
  read: ReadPlan;
}

/** The plan of the answer of a write of this kind by this caller. */
export async function planWriteAnswer(repo: Repository, ctx: RequestContext, kind: 'create' | 'update'): Promise<WriteAnswerPlan> {
  const access = await repo.guard.access(ctx);
  const shown = repo.guard.readable(access, repo.readable, false);
  const present = repo.env.presenter.plan({ ctx, model: repo.model, kind, fields: shown });
  const extra = present?.extra.filter((f) => !repo.readable.includes(f)) ?? [];
  const scopes = await linkScopes(repo, ctx, shown);
  return { access, present, extra, scopes, read: repo.readPlan({ fields: repo.readable, extra }) };
}

/** A written record, what its answer shows, and the after-hook that gets its own copy of it. */
interface WriteAnswer {
  plan: WriteAnswerPlan;
  id: string;
  /** Runs the after-hooks of the write; none when no hook of its name is registered for the entity type (no copy is made then). */
  afterHook?: (record: ApiRecord) => Promise<void>;
  /** The rows of `plan.read.readBack` that the write's statement answered; without them the record is read now. */
  read?: Record<string, unknown>[];
}

/**
 * The answer of a create or an update: the record as stored, without fields the caller may not
 * read, shaped by the present stage. After-hooks get their own copy with every readable field
 * (never a write-only one, nor what the present stage reads), whatever the request asks.
 */
export async function answerWrite<TRecord extends ApiRecord>(repo: Repository<TRecord>, ctx: RequestContext, { plan, id, afterHook, read }: WriteAnswer): Promise<TRecord> {
  const { access, present, extra, scopes } = plan;
  const record = (read ? await recordOf(repo, read, { plan: plan.read, scopes }) : await findById(repo, id, { fields: repo.readable, extra, scopes })) as ApiRecord | undefined;
  // Another request deleted the record between the write's commit and this read: it is not found
  // now, as a read sent after that delete would find.
  if (!record) throw notFound(repo.model.name, id);
  if (afterHook) {
    // Hooks see every linked record, not only those the caller may read.
    const whole = scopes ? ((await findById(repo, id, { fields: repo.readable })) as ApiRecord) : record;
    await afterHook(shapeRecord(repo.readPlan({ fields: repo.readable }).keys, whole));
  }
  // Fields read for the present stage stay until it has run.
  const presented = await repo.guard.present(ctx, record, present ? repo.readable.filter((f) => !present.extra.includes(f)) : repo.readable);
  await nameLinksFor(repo, ctx.shownTo ?? access, [presented]);
  // As its fields, a write's answer keeps every language variant of its attributes: a `language`
  // header localizes reads only (a client that writes the answer back must not move a German
  // value into the main one).
  await repo.env.attributes?.present({ ...ctx, language: undefined }, { model: repo.model, records: [presented] }, { mode: 'single' });
  await present?.run([presented], { access });
  return presented as TRecord;
}
