import type { FieldModel } from '../definition/normalize';

const isPlainValue = (v: unknown) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** Two values of a field are equal (multiple links compared as sets). */
export function equalValues(field: Pick<FieldModel, 'type'>, stored: unknown, next: unknown): boolean {
  if (field.type === 'linkMultiple') {
    const a = new Set((stored as string[] | null) ?? []);
    const b = new Set((next as string[] | null) ?? []);
    return a.size === b.size && [...a].every((x) => b.has(x));
  }
  // Strings, finite numbers and booleans are equal in JSON exactly when they are ===: no need to
  // serialize them (upsert compares every field of every item).
  if (isPlainValue(stored) && isPlainValue(next)) return stored === next;
  return JSON.stringify(stored ?? null) === JSON.stringify(next ?? null);
}

/**
 * Stored and new value are the same (multiple links compared as sets). A write-only value is
 * never the same: records are read without it, and comparing it would tell clients what it holds.
 */
export function sameValue(field: Pick<FieldModel, 'type' | 'def'>, stored: unknown, next: unknown): boolean {
  return !field.def?.writeOnly && equalValues(field, stored, next);
}
