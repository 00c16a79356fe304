import type { GenerationName } from './generations';
import type { ApiRecord } from './declarations';
import type { EntityModel } from './definition/normalize';
import { BootError } from './errors';
import type { RequestContext } from './context';

/**
 * Points in a record's path where plugins (and a definition's own `hooks`) may act. The list is
 * closed. `beforeFind` adds row rules: `where` items every read and write of the entity type keeps
 * to (see `records/row-rules.ts`).
 */
export const RECORD_HOOKS = [
  'beforeFind',
  'beforeCreate',
  'afterCreate',
  'beforeUpdate',
  'afterUpdate',
  'beforeDelete',
  'afterDelete',
  'afterRestore',
  'afterRead',
] as const;
export type RecordHookName = (typeof RECORD_HOOKS)[number];

/**
 * Points in the instance's life where plugins may act, in the order they run: definitions are
 * transformed before they are checked and resolved, entity models are visited, every
 * authenticated request passes `onRequest`, every response page passes `onPresent` (and the
 * `_meta` categories), and the instance starts and closes.
 */
export const APP_HOOKS = ['transformDefinitions', 'onEntity', 'onReady', 'onRequest', 'onPresent', 'onClose'] as const;
export type AppHookName = (typeof APP_HOOKS)[number];

/**
 * The responses the present stage shapes: a list page, a single record, the records of a link
 * (`entityRelation`, generation B `/{Entity}/{id}/{link}`), and the record a create or an update
 * answers with.
 */
export const PRESENT_KINDS = ['list', 'read', 'linked', 'create', 'update'] as const;
export type PresentKind = (typeof PRESENT_KINDS)[number];

export interface RecordHookEvent {
  ctx: RequestContext;
  model: EntityModel;
  /** The id of the record written or read. */
  id?: string;
  /** beforeCreate / beforeUpdate: the body, which the hook may change. */
  data?: Record<string, unknown>;
  /**
   * afterCreate / afterUpdate: the record as stored, every field but write-only ones, with link
   * names, whatever the request asks; a copy of the hook's own. afterRead: the record about to be
   * returned (changes show).
   */
  record?: ApiRecord;
  /** beforeUpdate / beforeDelete: the record before the change (afterDelete: before the delete). */
  existing?: ApiRecord;
  /**
   * beforeUpdate: record keys with the values the stored record must still hold when the change
   * is written (another request may have changed it since `existing` was read). When it no longer
   * does, the update fails with 409 `CORE_CONFLICT` and writes nothing.
   */
  expect?: Record<string, unknown>;
  /**
   * beforeFind: the row rules so far, `where` items in the language of list queries; a hook pushes
   * its own (they are ANDed). Every read and write of the caller keeps to the records they match.
   */
  where?: unknown[];
}

export type RecordHook = (event: RecordHookEvent) => void | Promise<void>;

/** An authenticated request, before its route runs: what `onRequest` hooks see. */
export interface RequestEvent {
  ctx: RequestContext;
  generation: GenerationName;
  method: string;
  /** The path below the base (`/Product/123`). */
  path: string;
  /** A request header (case-insensitive name), or undefined. */
  header(name: string): string | undefined;
  /** The query string, parsed with bracket notation (`where[0][type]=…`). */
  readonly query: Record<string, unknown>;
}

/**
 * Reads what a request asks for into its context (`ctx.variables`), and refuses bad values by
 * throwing an `ApiError` (before anything is read or written).
 */
export type RequestHook = (event: RequestEvent) => void | Promise<void>;

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

  /** The entity types with hooks of this name of their own (`*` when some are for every entity type). */
  entitiesWith(name: RecordHookName): string[] {
    return [...this.hooks.keys()].filter((key) => key.startsWith(`${name}:`)).map((key) => key.slice(name.length + 1));
  }

  async run(name: RecordHookName, event: RecordHookEvent): Promise<void> {
    for (const key of [`${name}:*`, `${name}:${event.model.name}`]) {
      for (const hook of this.hooks.get(key) ?? []) await hook(event);
    }
  }
}
