import type { RequestContext } from '../context';
import type { RowChange } from '../sql/record-store';
import { nowDateTime } from '../time';

/** Keys whose value before-hooks put into (or changed in) the body. */
export function keysSetByHooks(sent: Record<string, unknown>, input: Record<string, unknown>): ReadonlySet<string> {
  return new Set(Object.keys(input).filter((key) => !Object.is(sent[key], input[key])));
}

/** Who makes a change now: the caller, and in a delegated session the admin acting for them. */
export const rowChange = (ctx: RequestContext, at = nowDateTime()): RowChange => ({ at, userId: ctx.user?.id ?? null, actorId: ctx.actor?.id ?? null });
