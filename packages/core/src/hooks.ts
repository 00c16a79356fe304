import type { ApiRecord } from './declarations';
import type { EntityModel } from './definition/normalize';
import { BootError } from './errors';
import type { RequestContext } from './context';

/** Points in a record's write path where plugins may act. The list is closed. */
export const RECORD_HOOKS = [
  'beforeCreate',
  'afterCreate',
  'beforeUpdate',
  'afterUpdate',
  'beforeDelete',
  'afterDelete',
  'afterRead',
] as const;
export type RecordHookName = (typeof RECORD_HOOKS)[number];

/** Points in the instance's life where plugins may act. */
export const APP_HOOKS = ['onEntity', 'onReady', 'onClose'] as const;
export type AppHookName = (typeof APP_HOOKS)[number];

export interface RecordHookEvent {
  ctx: RequestContext;
  model: EntityModel;
  /** The id of the record written or read. */
  id?: string;
  /** beforeCreate / beforeUpdate: the body, which the hook may change. */
  data?: Record<string, unknown>;
  /** after*: the record as stored (afterRead: as about to be returned). */
  record?: ApiRecord;
  /** beforeUpdate / beforeDelete: the record before the change. */
  existing?: ApiRecord;
  /**
   * beforeUpdate: record keys with the values the stored record must still hold when the change
   * is written (another request may have changed it since `existing` was read). When it no longer
   * does, the update fails with 409 `CORE_CONFLICT` and writes nothing.
   */
  expect?: Record<string, unknown>;
}

export type RecordHook = (event: RecordHookEvent) => void | Promise<void>;

/** Hooks by name and entity (`*` for every entity), run in registration order. */
export class HookRegistry {
  private readonly hooks = new Map<string, RecordHook[]>();

  add(name: string, entity: string, hook: RecordHook): void {
    if (!(RECORD_HOOKS as readonly string[]).includes(name)) {
      throw new BootError('CORE_HOOK_NOT_SUPPORTED', `unknown record hook '${name}'; known: ${RECORD_HOOKS.join(', ')}`);
    }
    const key = `${name}:${entity}`;
    this.hooks.set(key, [...(this.hooks.get(key) ?? []), hook]);
  }

  has(name: RecordHookName, entity: string): boolean {
    return this.hooks.has(`${name}:${entity}`) || this.hooks.has(`${name}:*`);
  }

  async run(name: RecordHookName, event: RecordHookEvent): Promise<void> {
    for (const key of [`${name}:*`, `${name}:${event.model.name}`]) {
      for (const hook of this.hooks.get(key) ?? []) await hook(event);
    }
  }
}
