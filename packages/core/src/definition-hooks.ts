import type { EntityDefinition, RowRule } from './declarations';
import { ApiError } from './errors';
import { RECORD_HOOKS, type HookRegistry, type RecordHook } from './hooks';

/**
 * Exports `installDefinitionHooks`: the record hooks a definition carries (`hooks`) and its row
 * rule (`access`, a `beforeFind` hook) join the instance's hook registry, so that they run where
 * and as the plugins' hooks run: after those registered before (core's, the plugins'), for the
 * entity type alone.
 */

/** The where item that matches no record (an empty `in`): what a row rule of `false` adds. */
const NOTHING = { type: 'in', attribute: 'id', value: [] };

/** The `beforeFind` hook of a definition's `access`: adds its answer to the row rules. */
function accessHook(entity: string, access: NonNullable<EntityDefinition['access']>): RecordHook {
  return async (event) => {
    const rule: RowRule = await access(event.ctx);
    if (rule === true) return;
    if (rule === false) return void event.where?.push(NOTHING);
    if (typeof rule !== 'object' || rule === null) throw new ApiError('CORE_INTERNAL', `The access rule of ${entity} answered neither true, false nor where items`);
    event.where?.push(...(Array.isArray(rule) ? rule : [rule]));
  };
}

/** Registers every definition's `access` and `hooks`, in the order of `RECORD_HOOKS`. */
export function installDefinitionHooks(hooks: HookRegistry, definitions: Iterable<EntityDefinition>): void {
  for (const def of definitions) {
    if (def.access) hooks.add('beforeFind', def.name, accessHook(def.name, def.access));
    for (const name of RECORD_HOOKS) {
      const hook = def.hooks?.[name];
      if (hook) hooks.add(name, def.name, hook);
    }
  }
}
