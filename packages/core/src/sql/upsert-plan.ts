import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel } from '../definition/normalize';
import { sameValue } from './record-guard';

export type UpsertStatus = 'Created' | 'Updated' | 'NotModified' | 'Failed';

export interface UpsertResult {
  status: UpsertStatus;
  stored: boolean;
  entity?: ApiRecord;
  message?: string;
}

/** One record as the batch sees it: as stored, plus what earlier items of the batch did to it. */
export interface RecordState {
  id: string;
  record: Record<string, unknown>;
  /** Created by this batch (written by the insert, not by an update). */
  isNew: boolean;
  /** Changed by this batch (for existing records: written by the update). */
  dirty: Set<FieldModel>;
  /** Items of the batch that created or changed it, in order. */
  items: number[];
}

/** A lookup key: `id:<id>`, `f:<field>:<value>` or `ix:<index>:<json of values>`. */
const idKey = (id: string) => `id:${id}`;
const fieldKey = (field: FieldModel, value: unknown) => `f:${field.name}:${JSON.stringify(value)}`;
const indexKey = (name: string, values: unknown[]) => `ix:${name}:${JSON.stringify(values)}`;

/** The keys a record can be found by: id, each non-null unique field, each complete unique index. */
export function recordKeys(model: EntityModel, record: Record<string, unknown>): string[] {
  const keys = [idKey(record.id as string)];
  for (const f of model.uniqueFields) {
    const v = record[f.key];
    if (v !== null && v !== undefined) keys.push(fieldKey(f, v));
  }
  for (const ix of model.uniqueIndexes) {
    const values = ix.fields.map((n) => record[(model.field.get(n) as FieldModel).key]);
    if (values.every((v) => v !== null && v !== undefined)) keys.push(indexKey(ix.name, values));
  }
  return keys;
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
  const byKey = new Map([...values].map(([f, v]) => [f.key, v]));
  const unique = model.uniqueFields
    .filter((f) => byKey.get(f.key) !== undefined && byKey.get(f.key) !== null)
    .map((f) => fieldKey(f, byKey.get(f.key)));
  const indexes = model.uniqueIndexes
    .map((ix) => ({ ix, values: ix.fields.map((n) => byKey.get((model.field.get(n) as FieldModel).key)) }))
    .filter(({ values: v }) => v.every((x) => x !== undefined && x !== null))
    .map(({ ix, values: v }) => indexKey(ix.name, v));
  return { id, unique, indexes };
}

/** Records of one entity type by every key, kept current as the batch is decided. */
export class BatchIndex {
  private readonly byKey = new Map<string, RecordState>();

  constructor(private readonly model: EntityModel) {}

  add(state: RecordState): void {
    for (const key of recordKeys(this.model, state.record)) this.byKey.set(key, state);
  }

  /** Re-indexes a record whose unique values changed. */
  reindex(state: RecordState, before: string[]): void {
    for (const key of before) if (this.byKey.get(key) === state) this.byKey.delete(key);
    this.add(state);
  }

  /** A key another record of the batch already holds (a unique collision), if any. */
  collision(state: RecordState | undefined, record: Record<string, unknown>): string | undefined {
    return recordKeys(this.model, record).find((key) => {
      const holder = this.byKey.get(key);
      return holder !== undefined && holder !== state;
    });
  }

  /** The record an item names, `ambiguous` when its unique fields point at different records. */
  find(lookup: Lookup): RecordState | 'ambiguous' | undefined {
    if (lookup.id !== undefined) return this.byKey.get(idKey(lookup.id));
    const hits = new Set(lookup.unique.map((k) => this.byKey.get(k)).filter((s): s is RecordState => !!s));
    if (hits.size > 1) return 'ambiguous';
    if (hits.size === 1) return [...hits][0];
    for (const key of lookup.indexes) {
      const hit = this.byKey.get(key);
      if (hit) return hit;
    }
    return undefined;
  }
}

/** Applies an item's values to a state; answers whether anything changed. */
export function applyValues(state: RecordState, values: Map<FieldModel, unknown>): boolean {
  let changed = false;
  for (const [field, value] of values) {
    if (sameValue(field, state.record[field.key], value)) continue;
    state.record[field.key] = field.type === 'linkMultiple' ? [...new Set(value as string[])] : value;
    state.dirty.add(field);
    changed = true;
  }
  return changed;
}

export const failed = (message: string): UpsertResult => ({ status: 'Failed', stored: false, message });
