import type { ApiRecord } from '../../declarations';
import { isLinkField, type EntityModel, type FieldModel, type HasManyField } from '../../definition/model';
import { ApiError } from '../../errors';
import { diffOf, type Diff } from '../changes';
import { sameValue } from '../values';

export type UpsertStatus = 'Created' | 'Updated' | 'NotModified' | 'Failed';

/** `upsert` creates what an item names when there is none; `update` (mass updates) fails the item instead. */
export type UpsertMode = 'upsert' | 'update';

export interface UpsertResult {
  status: UpsertStatus;
  stored: boolean;
  entity?: ApiRecord;
  message?: string;
  /** A failed item's error code: for callers that report it (mass updates), never in upsert answers. */
  code?: string;
}

/** The result of an item as upsert answers show it (CONTRACT §6): no error code (copied only when it has one). */
export const publicResult = (result: UpsertResult): UpsertResult => {
  if (result.code === undefined) return result;
  const { code: _code, ...shown } = result;
  return shown;
};

/** One item of a run, validated; then what the batch decided for it. */
export interface Prepared {
  index: number;
  id?: string;
  /** The id a record the item creates gets when the payload names none (else a new random one). */
  newId?: string;
  /** The payload as sent: its keys tell which fields the item sets. */
  data: Record<string, unknown>;
  values: Map<FieldModel, unknown>;
  state?: RecordState;
  /**
   * The record as this item left it, copied only when a later item of the batch changes the same
   * record (else the result shows the state's final record, which is the same).
   */
  snapshot?: Record<string, unknown>;
  status?: 'Created' | 'Updated' | 'NotModified';
  /** What the item changed of its record (logged with the batch). */
  diff?: Diff;
  /**
   * The values an item that created its record created it with: its diff is made of them only
   * when the process logs its change (`itemDiff`; the database may log it from the row instead).
   */
  created?: ReadonlyMap<FieldModel, unknown>;
}

/** One record as the batch sees it: as stored, plus what earlier items of the batch did to it. */
export interface RecordState {
  id: string;
  record: Record<string, unknown>;
  /** Created by this batch (written by the insert, not by an update). */
  isNew: boolean;
  /** Changed by this batch (for existing records: written by the update). */
  dirty: Set<FieldModel>;
  /** The last item of the batch that created or named this record. */
  lastItem?: Prepared;
}

/** The record an item leaves: shown as it is now when no later item changes it (see `Prepared.snapshot`). */
export function settle(state: RecordState, item: Prepared): void {
  if (state.lastItem && state.lastItem !== item) state.lastItem.snapshot ??= { ...state.record };
  state.lastItem = item;
  item.state = state;
}

/** A lookup key: `id:<id>`, `f:<field>:<value>` or `ix:<index>:<json of values>`. */
const idKey = (id: string) => `id:${id}`;
/** A string goes as `s` and itself (no JSON text starts with `s`), other values as their JSON. */
const fieldKey = (field: FieldModel, value: unknown) => `f:${field.name}:${typeof value === 'string' ? `s${value}` : JSON.stringify(value)}`;
const indexKey = (name: string, values: unknown[]) => `ix:${name}:${JSON.stringify(values)}`;

/**
 * The keys a record can be found by: id, each non-null unique field, each complete unique index.
 * `changes` are values about to be applied to the record (they win over its own).
 */
export function recordKeys(model: EntityModel, record: Record<string, unknown>, changes?: ReadonlyMap<FieldModel, unknown>): string[] {
  const value = (f: FieldModel) => (changes?.has(f) ? changes.get(f) : record[f.key]);
  const keys = [idKey(record.id as string)];
  for (const f of model.uniqueFields) {
    const v = value(f);
    if (v !== null && v !== undefined) keys.push(fieldKey(f, v));
  }
  for (const ix of model.uniqueIndexes) {
    const values = ix.fields.map((n) => value(model.field.get(n) as FieldModel));
    if (values.every((v) => v !== null && v !== undefined)) keys.push(indexKey(ix.name, values));
  }
  return keys;
}

/**
 * A record a segment read without locks was changed or deleted by another request before the
 * segment wrote it: the segment's transaction ends, and it is decided again on locked records.
 */
export class ChangedMeanwhile extends Error {}

/** The error of a unique key another record holds (the text of a 409). */
export function uniqueViolation(model: EntityModel, key: string): ApiError {
  const [kind, name] = key.split(':');
  const fields = kind === 'id' ? ['id'] : kind === 'f' ? [name] : (model.uniqueIndexes.find((ix) => ix.name === name)?.fields ?? [name]);
  return new ApiError('CORE_UNIQUE_VIOLATION', `${model.name} with the same ${fields.join(', ')} already exists`, { details: { entity: model.name, fields } });
}

/**
 * The lookup of the spec, in order: (1) `id` when present; (2) else the unique fields present;
 * (3) else each unique index whose fields are all present.
 */
export interface Lookup {
  id?: string;
  unique: string[];
  indexes: string[];
}

export function lookupOf(model: EntityModel, id: string | undefined, values: Map<FieldModel, unknown>): Lookup {
  const unique: string[] = [];
  for (const f of model.uniqueFields) {
    const v = values.get(f);
    if (v !== undefined && v !== null) unique.push(fieldKey(f, v));
  }
  const indexes: string[] = [];
  for (const ix of model.uniqueIndexes) {
    const v = ix.fields.map((n) => values.get(model.field.get(n) as FieldModel));
    if (v.every((x) => x !== undefined && x !== null)) indexes.push(indexKey(ix.name, v));
  }
  return { id, unique, indexes };
}

/**
 * The fields a lookup looks a record up by: none by id, else the unique fields present, else
 * those of each complete unique index (the order of the spec).
 */
export function lookupFields(model: EntityModel, { id, values }: { id?: string; values: ReadonlyMap<FieldModel, unknown> }): FieldModel[] {
  if (id !== undefined) return [];
  const present = (f: FieldModel) => values.get(f) !== undefined && values.get(f) !== null;
  const unique = model.uniqueFields.filter(present);
  if (unique.length) return unique;
  const indexed = model.uniqueIndexes.map((ix) => ix.fields.map((n) => model.field.get(n) as FieldModel)).filter((fields) => fields.every(present));
  return [...new Set(indexed.flat())];
}

/** The key an item found its record by (the first of its lookup that the index holds). */
export type Hit = { state: RecordState; key: string };

/** Records of one entity type by every key, kept current as the batch is decided. */
export class BatchIndex {
  private readonly byKey = new Map<string, RecordState>();

  constructor(private readonly model: EntityModel) {}

  /** Indexes a record by its keys (`recordKeys`, computed again when not given). */
  add(state: RecordState, keys = recordKeys(this.model, state.record)): void {
    for (const key of keys) this.byKey.set(key, state);
  }

  /** Re-indexes a record whose unique values may have changed from `before` to `after`. */
  reindex(state: RecordState, before: readonly string[], after = recordKeys(this.model, state.record)): void {
    if (after.length === before.length && after.every((key, i) => key === before[i])) return;
    for (const key of before) if (this.byKey.get(key) === state) this.byKey.delete(key);
    this.add(state, after);
  }

  /** A key of `keys` another record of the batch already holds (a unique collision), if any. */
  collision(state: RecordState | undefined, keys: readonly string[]): string | undefined {
    return keys.find((key) => {
      const holder = this.byKey.get(key);
      return holder !== undefined && holder !== state;
    });
  }

  /** The record an item names and the key that found it, `ambiguous` when its unique fields point at different records. */
  find(lookup: Lookup): Hit | 'ambiguous' | undefined {
    const at = (key: string): Hit | undefined => {
      const state = this.byKey.get(key);
      return state && { state, key };
    };
    if (lookup.id !== undefined) return at(idKey(lookup.id));
    let first: Hit | undefined;
    for (const key of lookup.unique) {
      const hit = at(key);
      if (hit && first && hit.state !== first.state) return 'ambiguous';
      first ??= hit;
    }
    // Only an item without unique fields is looked up by its unique indexes (`lookupFields`): an
    // item whose unique fields name no record creates one, found by nothing it did not name first.
    if (lookup.unique.length > 0) return first;
    for (const key of lookup.indexes) {
      const hit = at(key);
      if (hit) return hit;
    }
    return undefined;
  }
}

/**
 * A field whose writes change other records of the same entity type: a link to the own type that
 * is one side of a pair (`children` and `parent`, or both sides of one join table).
 */
const changesOthers = (model: EntityModel, f: FieldModel): boolean =>
  isLinkField(f) && f.target === model.name && !f.system && (!!f.def.foreign || model.fields.some((g) => isLinkField(g) && g.target === model.name && g.def.foreign === f.name));

/**
 * What the set-based write of a segment cannot put in item order. It inserts the new records, then
 * updates the changed ones to their last values, then sets their multiple links; so an item must
 * wait until the items before it are stored when it takes a unique key a stored record of the
 * segment gave up (the insert or update would meet the key still stored), when it moves hasMany
 * links away from another record of the segment, or when it sets a link that changes other
 * records of its own type (the segment's copies of those records would be stale). An item of the
 * latter two kinds that comes first in its segment is the last one of it.
 */
export class SegmentHazards {
  /** Keys stored records of the segment held and gave up, with the record that held each. */
  private readonly freed = new Map<string, RecordState>();
  /** hasMany fields: target id → the record of the segment that lists it. */
  private readonly owners = new Map<HasManyField, Map<string, RecordState>>();
  private readonly linking: FieldModel[];

  constructor(model: EntityModel) {
    for (const f of model.fields) if (f.type === 'linkMultiple' && f.linkKind === 'hasMany') this.owners.set(f, new Map());
    this.linking = model.fields.filter((f) => changesOthers(model, f));
  }

  /** Notes the hasMany links of a record of the segment: all of them when loaded, those of `set` when an item set them. */
  track(state: RecordState, set?: ReadonlyMap<FieldModel, unknown>): void {
    for (const [f, owners] of this.owners) {
      if (set && !set.has(f)) continue;
      for (const id of (state.record[f.key] as string[] | undefined) ?? []) owners.set(id, state);
    }
  }

  /** Whether an item that changes `state` (undefined: creates a record) changes records it does not name. */
  linksOthers(state: RecordState | undefined, p: Prepared): boolean {
    if (this.linking.some((f) => p.values.has(f))) return true;
    for (const [f, owners] of this.owners) {
      if (!p.values.has(f)) continue;
      for (const id of p.values.get(f) as string[]) {
        const owner = owners.get(id);
        if (owner && owner !== state) return true;
      }
    }
    return false;
  }

  /** Whether an item that leaves `state` holding `keys` takes a key another stored record gave up in this segment. */
  takesFreed(state: RecordState | undefined, keys: readonly string[]): boolean {
    return this.freed.size > 0 && keys.some((key) => {
      const holder = this.freed.get(key);
      return holder !== undefined && holder !== state;
    });
  }

  /** Notes the keys a stored record gave up (`before` but not `after`). */
  release(state: RecordState, before: readonly string[], after: readonly string[]): void {
    if (state.isNew) return;
    for (const key of before) if (!after.includes(key)) this.freed.set(key, state);
  }
}

/** Applies an item's values to a state; answers whether anything changed. */
export function applyValues(state: RecordState, values: Map<FieldModel, unknown>): { changed: boolean; diff: Diff } {
  const changes = new Map<FieldModel, unknown>();
  const before: Record<string, unknown> = {};
  for (const [field, value] of values) {
    if (sameValue(field, state.record[field.key], value)) continue;
    before[field.key] = state.record[field.key];
    state.record[field.key] = field.type === 'linkMultiple' ? [...new Set(value as string[])] : value;
    changes.set(field, state.record[field.key]);
    state.dirty.add(field);
  }
  return { changed: changes.size > 0, diff: diffOf(changes, before) };
}

/** A failed item: the message the answer shows, and the code (mass updates report it; upsert answers leave it out). */
export const failed = (error: ApiError): UpsertResult => ({ status: 'Failed', stored: false, message: error.message, code: error.code });
