import { ApiError } from '../errors';

/**
 * How deep `and`, `or` and `not` may nest in each other, how many values a whole `where` may hold,
 * and how many conditions (SQLite refuses an expression of about 1,000 terms joined by AND or OR).
 * The query parser and the where compiler both hold to them.
 */
export const MAX_WHERE_DEPTH = 20;
const MAX_WHERE_VALUES = 10_000;
const MAX_WHERE_CONDITIONS = 500;

const tooLarge = (message: string) => new ApiError('CORE_INVALID_QUERY', message);

/**
 * 400 for a `where` nested deeper than `MAX_WHERE_DEPTH`, holding more than `MAX_WHERE_VALUES`
 * values (list entries and scalars; the databases bind a limited number per statement) or more
 * than `MAX_WHERE_CONDITIONS` conditions.
 */
export function assertWhereSize(items: readonly unknown[]): void {
  let values = 0;
  let conditions = 0;
  const visit = (value: unknown, depth: number): void => {
    // An item, its list of children, a child item…: two levels of JSON per level of groups.
    if (depth > 2 * MAX_WHERE_DEPTH + 2) throw tooLarge(`where must not nest deeper than ${MAX_WHERE_DEPTH} levels`);
    if (value === null || typeof value !== 'object') {
      values += 1;
      if (values > MAX_WHERE_VALUES) throw tooLarge(`where must not hold more than ${MAX_WHERE_VALUES} values`);
      return;
    }
    if (!Array.isArray(value) && 'type' in value && ++conditions > MAX_WHERE_CONDITIONS) {
      throw tooLarge(`where must not hold more than ${MAX_WHERE_CONDITIONS} conditions`);
    }
    for (const child of Object.values(value)) visit(child, depth + 1);
  };
  for (const item of items) visit(item, 0);
}
