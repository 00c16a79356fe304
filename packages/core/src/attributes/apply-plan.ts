import type { EntityModel, LinkEnd, SchemaModel } from '../definition/model';
import { ApiError, joinedMessages, validationFailed } from '../errors';
import type { AttributeStore, ValueWrite } from '../sql/attribute-store';
import type { Transaction } from '../sql/database';
import type { Dialect } from '../sql/dialects/dialect';
import { equalValues } from '../records/values';
import { attributeKey, hasUnit, removedDiff, valueKey, type AttributeDef, type StoredValue } from './attribute-def';
import type { ValueChange, WritePlan } from './write-plan';

/**
 * Finds or creates the record a link object names, inside the write's transaction; returns its id.
 * `path` is where the object is in the body: its issues are named under it.
 */
export type LinkObjectResolver = (trx: Transaction, field: LinkEnd, link: { object: Record<string, unknown>; path: readonly (string | number)[] }) => Promise<string>;

/**
 * The rules of the record's write that attribute values pass too: link objects found or created
 * as for fields, and linked ids checked as for link fields (CONTRACT §15).
 */
export interface AttributeWriteRules {
  resolveLinkObject?: LinkObjectResolver;
  assertLinks(trx: Transaction, values: ReadonlyMap<LinkEnd, unknown>): Promise<void>;
}

export interface ApplyContext {
  trx: Transaction;
  store: AttributeStore;
  schema: SchemaModel;
  dialect: Dialect;
  model: EntityModel;
  recordId: string;
  rules: AttributeWriteRules;
}

/** A link attribute seen as a link field, so that the link rules of fields apply to it. */
export function linkField(a: AttributeDef, key = attributeKey(a)): LinkEnd {
  const type = a.type === 'link' ? 'link' : 'linkMultiple';
  const target = a.linkEntity ?? '';
  return { name: key, key: `${key}${type === 'link' ? 'Id' : 'Ids'}`, type, def: { type, entity: target }, target };
}

async function resolveLinkObjects(ac: ApplyContext, plan: WritePlan): Promise<void> {
  for (const change of plan.changes.values()) {
    if (!change.linkObject) continue;
    const resolve = ac.rules.resolveLinkObject;
    if (!resolve) throw validationFailed('Link objects are not accepted here', [{ path: change.path, code: 'invalid_link_object', message: 'send an id' }]);
    change.value = await resolve(ac.trx, linkField(change.attribute), { object: change.linkObject, path: change.path });
  }
}

/**
 * Linked ids must name live records of the attribute's entity type; units must belong to its
 * measure, each value's own (one unit may be sent for several attributes, of different measures).
 */
async function assertTargets(ac: ApplyContext, plan: WritePlan): Promise<void> {
  const links = new Map<LinkEnd, unknown>();
  for (const change of plan.changes.values()) {
    const a = change.attribute;
    if ((a.type === 'link' || a.type === 'linkMultiple') && change.value !== undefined && change.value !== null) {
      links.set({ ...linkField(a), key: change.path.join('.') }, change.value);
    }
  }
  const units = [...plan.changes.values()].filter((change): change is ValueChange & { unitId: string } => typeof change.unitId === 'string');
  await ac.rules.assertLinks(ac.trx, links);
  const measures = await ac.store.unitMeasures(ac.trx, [...new Set(units.map((c) => c.unitId))]);
  const issues = units
    .filter((change) => measures.get(change.unitId) !== change.attribute.measureId)
    .map((change) => ({ path: change.unitPath ?? change.path, code: 'invalid_unit', message: `unit '${change.unitId}' is not a unit of the attribute's measure` }));
  if (issues.length) throw validationFailed(`Invalid units: ${joinedMessages(issues)}`, issues);
}

/** Read-only attributes keep their values; protected ones stay on the record. */
function assertAllowed(plan: WritePlan, stored: Map<string, StoredValue>): void {
  for (const change of plan.changes.values()) {
    const a = change.attribute;
    if (!a.isReadOnly) continue;
    const main = stored.get(`${a.id}:`);
    const same = (language: string, value: unknown) => equalValues(a, stored.get(`${a.id}:${language}`)?.value ?? null, value);
    const unchanged =
      (change.value === undefined || same('', change.value)) &&
      (change.unitId === undefined || (main?.unitId ?? null) === change.unitId) &&
      [...change.languages].every(([l, v]) => same(l, v));
    if (!unchanged) {
      throw new ApiError('CORE_READ_ONLY_FIELD', `attribute '${attributeKey(a)}' is read-only`, {
        details: { issues: [{ path: change.path, code: 'read_only', message: `${change.path.join('.')} is read-only` }] },
      });
    }
  }
  for (const a of plan.remove.values()) {
    if (a.isProtected && stored.has(`${a.id}:`)) {
      throw validationFailed(`attribute '${attributeKey(a)}' is protected and cannot be removed`, [
        { path: ['__attributesToRemove'], code: 'protected', message: `attribute '${attributeKey(a)}' is protected` },
      ]);
    }
  }
}

/** Unit-bearing values written without a unit get their measure's default unit (when they have none yet). */
async function defaultUnits(ac: ApplyContext, plan: WritePlan, stored: Map<string, StoredValue>): Promise<void> {
  const wanting = [...plan.changes.values()].filter(
    (c) => hasUnit(c.attribute) && c.unitId === undefined && c.value !== undefined && c.value !== null && !stored.get(`${c.attribute.id}:`)?.unitId,
  );
  if (wanting.length === 0) return;
  const defaults = await ac.store.defaultUnits(ac.trx, [...new Set(wanting.map((c) => c.attribute.measureId as string))]);
  for (const c of wanting) {
    const unit = defaults.get(c.attribute.measureId as string);
    if (unit) c.unitId = unit;
  }
}

/**
 * The value a multiple link attribute is written with: the ids sent, and those it holds of linked
 * records in the bin, which no read shows (`linkedIds` in present.ts) and no write may lose: they
 * are listed again once restored, as a multiple link field's pairs are.
 */
async function withBinnedLinks(ac: ApplyContext, { attribute, sent, held }: { attribute: AttributeDef; sent: unknown; held: unknown }): Promise<unknown> {
  if (attribute.type !== 'linkMultiple' || !attribute.linkEntity || !Array.isArray(sent) || !Array.isArray(held) || held.length === 0) return sent;
  const live = await ac.store.linkNames(ac.trx, new Map([[attribute.linkEntity, new Set(held as string[])]]), { shows: () => false });
  const binned = (held as string[]).filter((id) => !live.has(`${attribute.linkEntity}:${id}`) && !sent.includes(id));
  return binned.length ? [...(sent as string[]), ...binned] : sent;
}

/** The ids of a multiple link attribute's diff without those `kept` holds beyond the ids sent (records in the bin: `withBinnedLinks`). */
function withoutBinned(diff: AppliedAttributes['diff'], { key, sent, kept }: { key: string; sent: unknown; kept: unknown }): void {
  const entry = diff[key];
  if (!entry || sent === kept || !Array.isArray(kept)) return;
  const binned = new Set((kept as string[]).filter((id) => !(sent as string[]).includes(id)));
  const shown = (ids: unknown) => (Array.isArray(ids) ? ids.filter((id) => !binned.has(id as string)) : ids);
  diff[key] = { was: shown(entry.was), became: shown(entry.became) };
}

/** What a plan wrote: whether anything changed, and `{key: {was, became}}` by the virtual fields' keys. */
export interface AppliedAttributes {
  changed: boolean;
  diff: Record<string, { was: unknown; became: unknown }>;
}

/** Writes one row (insert or update) when it differs from what is stored, noting what changed in `diff`. */
async function writeRow(ac: ApplyContext, { write, row, diff }: { write: ValueWrite; row: StoredValue | undefined; diff: AppliedAttributes['diff'] }): Promise<boolean> {
  const was = { value: row?.value ?? null, unitId: row?.unitId ?? null };
  if (row && equalValues(write.attribute, row.value, write.value) && row.unitId === write.unitId) return false;
  if (row) await ac.store.update(ac, row.id, write);
  else await ac.store.insert(ac, [write]);
  if (!equalValues(write.attribute, was.value, write.value)) diff[valueKey(write.attribute, write.language)] = { was: was.value, became: write.value };
  if (was.unitId !== write.unitId) diff[`${attributeKey(write.attribute)}UnitId`] = { was: was.unitId, became: write.unitId };
  return true;
}

/**
 * Applies a plan inside the caller's transaction: link objects resolved, targets and units
 * checked, rows written only where they change. Answers what changed.
 */
export async function applyPlan(ac: ApplyContext, plan: WritePlan): Promise<AppliedAttributes> {
  const diff: AppliedAttributes['diff'] = {};
  if (plan.empty) return { changed: false, diff };
  await resolveLinkObjects(ac, plan);
  await assertTargets(ac, plan);
  const touched = [...plan.changes.values()].map((c) => c.attribute).concat([...plan.assign.values()], [...plan.remove.values()]);
  const rows = await ac.store.stored(ac, touched);
  const stored = new Map(rows.map((r) => [`${r.attributeId}:${r.language}`, r]));
  assertAllowed(plan, stored);
  await defaultUnits(ac, plan, stored);
  let changed = false;
  for (const change of plan.changes.values()) {
    const a = change.attribute;
    const main = stored.get(`${a.id}:`);
    const sent = change.value === undefined ? (main?.value ?? null) : change.value;
    const value = await withBinnedLinks(ac, { attribute: a, sent, held: main?.value });
    const unitId = change.unitId === undefined ? (main?.unitId ?? null) : change.unitId;
    changed = (await writeRow(ac, { write: { attribute: a, language: '', value, unitId }, row: main, diff })) || changed;
    withoutBinned(diff, { key: valueKey(a, ''), sent, kept: value });
    for (const [language, v] of change.languages) {
      const row = stored.get(`${a.id}:${language}`);
      if (!row && v === null) continue;
      changed = (await writeRow(ac, { write: { attribute: a, language, value: v, unitId: null }, row, diff })) || changed;
    }
  }
  for (const a of plan.assign.values()) {
    if (plan.changes.has(a.id) || stored.has(`${a.id}:`)) continue;
    await ac.store.insert(ac, [{ attribute: a, language: '', value: null, unitId: null }], { keep: true });
    // An attribute put on the record without a value: it appears, empty.
    diff[valueKey(a)] = { was: null, became: null };
    changed = true;
  }
  const removed = [...plan.remove.values()].filter((a) => stored.has(`${a.id}:`) || rows.some((r) => r.attributeId === a.id));
  await ac.store.remove(ac, removed.map((a) => a.id));
  for (const a of removed) removedDiff(diff, a, rows);
  return { changed: changed || removed.length > 0, diff };
}
