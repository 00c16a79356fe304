import { ApiError } from '../errors';
import { groupItems, isWhereGroup } from '../sql/where-values';

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
const tooDeep = () => tooLarge(`where must not nest deeper than ${MAX_WHERE_DEPTH} levels`);

/**
 * 400 for `and`, `or` and `not` nested deeper than `MAX_WHERE_DEPTH`, counted in groups as the
 * compiler reads them: a group's value may be a list or one item object, and the latter costs
 * one level of JSON (or brackets) less, so a count of JSON levels alone lets twice as many
 * groups through. Recursion stops at the limit.
 */
function assertGroupDepth(items: readonly unknown[], depth: number): void {
  for (const item of items) {
    if (!isWhereGroup(item)) continue;
    if (depth >= MAX_WHERE_DEPTH) throw tooDeep();
    assertGroupDepth(groupItems((item as { value?: unknown }).value), depth + 1);
  }
}

/**
 * 400 for a `where` nesting groups deeper than `MAX_WHERE_DEPTH` (or values deeper than groups
 * may nest), holding more than `MAX_WHERE_VALUES` values (list entries and scalars; the databases
 * bind a limited number per statement) or more than `MAX_WHERE_CONDITIONS` conditions. Every
 * `where` passes here before it is compiled: lists (both forms), request bodies and jobs.
 */
export function assertWhereSize(items: readonly unknown[]): void {
  let values = 0;
  let conditions = 0;
  const visit = (value: unknown, depth: number, isValue = true): void => {
    // An item, its list of children, a child item…: at most two levels of JSON per level of
    // groups. This bounds values nested in a condition too (and the recursion of this walk).
    if (depth > 2 * MAX_WHERE_DEPTH + 2) throw tooDeep();
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
  assertGroupDepth(items, 0);
}
