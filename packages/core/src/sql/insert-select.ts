import { quoteName as q } from './dialects/shared';
import type { Dialect, RowShape } from './dialects/dialect';

/** An `insert … select … from <recordset>`, ready to run: its text, made once per key, and its bindings. */
export interface InsertSelect {
  /** What the text depends on: the table, the columns, those bound once, the recordset's shape. */
  key: string;
  text: () => string;
  bindings: unknown[];
}

/** Values a column may be bound once for: one marker serves every row only for a plain value. */
const isPlain = (value: unknown) => value === null || typeof value !== 'object';

/**
 * Inserts `rows` (keyed by `shape.columns`) as one recordset. Of the `shareable` columns, those
 * every row holds the same plain value in (a batch's time, caller and entity type; a default; a
 * field no item sets) are bound once, not once per row: a batch of new records sends half the JSON
 * it would send otherwise. The shared values' markers come first, in the select list.
 */
export function insertSelect(dialect: Dialect, rows: readonly Record<string, unknown>[], { shape, shareable }: { shape: RowShape; shareable: readonly string[] }): InsertSelect {
  const [first] = rows;
  const shared = new Set(shareable.filter((c) => isPlain(first[c]) && rows.every((row) => row[c] === first[c])));
  const set = dialect.recordset(rows, { ...shape, columns: shape.columns.filter((c) => !shared.has(c)) });
  const value = (c: string) => (shared.has(c) ? '?' : set.value(c));
  return {
    key: `${shape.table}:${shape.columns.join(',')}:${[...shared].join(',')}:${set.key}`,
    text: () => `insert into ${q(shape.table)} (${shape.columns.map(q).join(', ')}) select ${shape.columns.map(value).join(', ')} from ${set.from}`,
    bindings: [...shape.columns.filter((c) => shared.has(c)).map((c) => first[c]), ...set.bindings],
  };
}
