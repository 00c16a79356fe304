import { ApiError } from '../errors';

/**
 * How deep `and`, `or` and `not` may nest in each other, how many values a whole `where` may hold,
 * and how many conditions (SQLite refuses an expression of about 1,000 terms joined by AND or OR).
 * The query parser and the where compiler both hold to them.
 */
export const MAX_WHERE_DEPTH = 20;
const MAX_WHERE_VALUES = 10_000;
const MAX_WHERE_CONDITIONS = 500;

/** Keys of a condition that name what it does, not values it compares with. */
const CONDITION_NAMES = new Set(['type', 'attribute', 'dateTime', 'timeZone']);

const tooLarge = (message: string) => new ApiError('CORE_INVALID_QUERY', message);

/**
 * 400 for a `where` nested deeper than `MAX_WHERE_DEPTH`, holding more than `MAX_WHERE_VALUES`
 * values (list entries and scalars; the databases bind a limited number per statement) or more
 * than `MAX_WHERE_CONDITIONS` conditions.
 */
export function assertWhereSize(items: readonly unknown[]): void {
  let values = 0;
  let conditions = 0;
  const visit = (value: unknown, depth: number, isValue = true): void => {
    // An item, its list of children, a child item…: two levels of JSON per level of groups.
    if (depth > 2 * MAX_WHERE_DEPTH + 2) throw tooLarge(`where must not nest deeper than ${MAX_WHERE_DEPTH} levels`);
    if (value === null || typeof value !== 'object') {
      if (!isValue) return;
      values += 1;
      if (values > MAX_WHERE_VALUES) throw tooLarge(`where must not hold more than ${MAX_WHERE_VALUES} values`);
      return;
    }
    if (!Array.isArray(value) && 'type' in value && ++conditions > MAX_WHERE_CONDITIONS) {
      throw tooLarge(`where must not hold more than ${MAX_WHERE_CONDITIONS} conditions`);
    }
    // What a condition names (its operator, field, time zone) is no value of it.
    for (const [key, child] of Object.entries(value)) visit(child, depth + 1, Array.isArray(value) || !CONDITION_NAMES.has(key));
  };
  for (const item of items) visit(item, 0);
}
