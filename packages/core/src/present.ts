import type { UserAccess } from './auth/access-control';
import type { RequestContext } from './context';
import type { ApiRecord } from './declarations';
import type { EntityModel, FieldModel } from './definition/normalize';
import { BootError } from './errors';
import { PRESENT_KINDS, type PresentKind } from './hooks';
import type { Repository } from './records/repository';

/** A linked-record response: the record the link starts from, and the link. */
export interface PresentLink {
  model: EntityModel;
  record: ApiRecord;
  field: FieldModel;
}

/** What a response is, before its records are read. */
export interface PresentInfo {
  ctx: RequestContext;
  model: EntityModel;
  kind: PresentKind;
  /** The fields the response shows (chosen by `select`, readable by the caller). */
  fields: readonly FieldModel[];
}

/** One page of a response, after its records are read. */
export interface PresentEvent extends PresentInfo {
  /** The records, in order. Change them in place (add, replace or remove keys). */
  records: ApiRecord[];
  /** The caller's rights. */
  access: UserAccess;
  /** linked: the record and link the records were reached through. */
  link?: PresentLink;
  /** The repository of any entity type; with `systemContext()` its reads are unrestricted. */
  repository(entity: string): Repository;
}

/**
 * A plugin's part in shaping responses. It runs once per response page (list, single record,
 * linked records, create and update answers), never once per record.
 */
export interface PresentHook {
  /** The responses it applies to; default all of `PRESENT_KINDS`. */
  kinds?: readonly PresentKind[];
  /**
   * Whether this response needs the hook (default: every response of its kinds); asked before
   * `load`. A response that no hook needs and that shows no `_meta` skips the present stage.
   */
  applies?(info: PresentInfo): boolean;
  /**
   * Names of fields to read along with the response's own (in the same query), whatever the
   * caller selected or may read, write-only ones included. They are in the records while the
   * hooks run and removed afterwards, unless the response shows them anyway.
   */
  load?(info: PresentInfo): readonly string[];
  present(event: PresentEvent): void | Promise<void>;
  /**
   * Keys the hook adds to the records it presents, with the JSON Schema of each value: the
   * OpenAPI read schema of its entity types lists them.
   */
  adds?: Readonly<Record<string, Record<string, unknown>>>;
}

/** Computes a `_meta` category for a page: one value per record, in order. */
export type MetaProvider = (event: PresentEvent) => readonly unknown[] | Promise<readonly unknown[]>;

/** A category of `_meta`: one value per record, computed for the whole page at once. */
export interface MetaCategory {
  /** The responses it applies to; default all of `PRESENT_KINDS`. */
  kinds?: readonly PresentKind[];
  /** As `PresentHook.load`: fields the category needs, read only when `_meta` is asked for. */
  load?(info: PresentInfo): readonly string[];
  /** One value per record, in order; `undefined` leaves the category out of that record's `_meta`. */
  provide: MetaProvider;
  /** JSON Schema of the value, shown in the OpenAPI document. */
  schema?: Record<string, unknown>;
}

interface Registered<TItem> {
  entity: string;
  kinds: ReadonlySet<PresentKind>;
  item: TItem;
}

/** The hooks and `_meta` categories registered for one entity type and response kind. */
interface Registrations {
  hooks: readonly PresentHook[];
  categories: readonly (readonly [string, MetaCategory])[];
}

/** The work a response page needs: extra fields to read, then `run` on the records. */
export interface PresentPlan {
  /** Fields to read beyond the response's own. */
  extra: FieldModel[];
  run(records: ApiRecord[], context: { access: UserAccess; link?: PresentLink }): Promise<void>;
}

const kindsOf = (kinds: readonly PresentKind[] | undefined, what: string): ReadonlySet<PresentKind> => {
  for (const kind of kinds ?? []) {
    if (!(PRESENT_KINDS as readonly string[]).includes(kind)) {
      throw new BootError('CORE_HOOK_NOT_SUPPORTED', `${what}: unknown response kind '${kind}'; known: ${PRESENT_KINDS.join(', ')}`);
    }
  }
  return new Set(kinds ?? PRESENT_KINDS);
};

/** Extra keys the records carry for the hooks; output keys of `shown` fields stay. */
export function hiddenKeys(extra: readonly FieldModel[], shown: readonly FieldModel[]): string[] {
  const keys: string[] = [];
  for (const f of extra) {
    if (shown.includes(f)) continue;
    keys.push(f.key);
    if (f.type === 'link') keys.push(`${f.name}Name`);
    if (f.type === 'linkMultiple') keys.push(`${f.name}Names`);
  }
  return keys;
}

/**
 * The present stage: plugin hooks that shape response pages, and the `_meta` categories. Filled
 * while plugins register, read by every repository.
 */
export class Presenter {
  private readonly hooks: Registered<PresentHook>[] = [];
  private readonly meta = new Map<string, Registered<MetaCategory>>();
  /** The registrations by entity type and kind, found on first use; adding a hook or a category starts over. */
  private readonly registrations = new Map<string, Map<PresentKind, Registrations>>();

  constructor(private readonly repository: (entity: string) => Repository) {}

  addHook(entity: string, hook: PresentHook): void {
    if (!hook || typeof hook.present !== 'function') throw new BootError('CORE_PLUGIN_INVALID', 'onPresent needs a present function');
    if (hook.applies !== undefined && typeof hook.applies !== 'function') throw new BootError('CORE_PLUGIN_INVALID', 'onPresent: applies must be a function');
    if (hook.adds !== undefined && (typeof hook.adds !== 'object' || hook.adds === null)) throw new BootError('CORE_PLUGIN_INVALID', 'onPresent: adds must be an object of JSON Schemas');
    this.hooks.push({ entity, kinds: kindsOf(hook.kinds, 'onPresent'), item: hook });
    this.registrations.clear();
  }

  addMetaCategory(name: string, given: MetaCategory | MetaProvider): void {
    const category = typeof given === 'function' ? { provide: given } : given;
    if (!/^[a-zA-Z][A-Za-z0-9]*$/.test(name)) throw new BootError('CORE_PLUGIN_INVALID', `meta category name '${name}' must be letters and digits`);
    if (this.meta.has(name)) throw new BootError('CORE_PLUGIN_INVALID', `meta category '${name}' is added twice`);
    if (!category || typeof category.provide !== 'function') throw new BootError('CORE_PLUGIN_INVALID', `meta category '${name}' needs a provide function`);
    this.meta.set(name, { entity: '*', kinds: kindsOf(category.kinds, `meta category '${name}'`), item: category });
    this.registrations.clear();
  }

  /** The `_meta` categories by name (for the OpenAPI document). */
  metaCategories(): ReadonlyMap<string, MetaCategory> {
    return new Map([...this.meta].map(([name, r]) => [name, r.item]));
  }

  /** The keys present hooks add to records of `entity`, with their JSON Schema (for the OpenAPI document). */
  addedKeys(entity: string): Record<string, Record<string, unknown>> {
    const keys: Record<string, Record<string, unknown>> = {};
    for (const r of this.hooks) if (r.entity === '*' || r.entity === entity) Object.assign(keys, r.item.adds);
    return keys;
  }

  /** What a response needs, or undefined when no hook or category applies (the common case). */
  plan(info: PresentInfo): PresentPlan | undefined {
    const registered = this.registrationsFor(info.model.name, info.kind);
    const hooks = registered.hooks.length ? registered.hooks.filter((hook) => hook.applies?.(info) ?? true) : registered.hooks;
    const categories = info.ctx.withMeta ? registered.categories : [];
    if (hooks.length === 0 && categories.length === 0) return undefined;
    const extra = new Set<FieldModel>();
    for (const part of [...hooks, ...categories.map(([, c]) => c)]) {
      for (const name of part.load?.(info) ?? []) {
        const field = info.model.field.get(name);
        if (!field) throw new Error(`a present hook asked to load '${name}', which is no field of ${info.model.name}`);
        if (!info.fields.includes(field)) extra.add(field);
      }
    }
    const loaded = [...extra];
    return {
      extra: loaded,
      run: async (records, { access, link }) => {
        const event: PresentEvent = { ...info, records, access, link, repository: this.repository };
        for (const hook of hooks) await hook.present(event);
        if (categories.length) await this.addMeta(event, categories);
        const hidden = hiddenKeys(loaded, info.fields);
        if (hidden.length) for (const record of records) for (const key of hidden) delete record[key];
      },
    };
  }

  private registrationsFor(entity: string, kind: PresentKind): Registrations {
    let byKind = this.registrations.get(entity);
    if (!byKind) this.registrations.set(entity, (byKind = new Map()));
    let found = byKind.get(kind);
    if (!found) {
      const applies = (r: Registered<unknown>) => r.kinds.has(kind) && (r.entity === '*' || r.entity === entity);
      const hooks = this.hooks.filter(applies).map((r) => r.item);
      const categories = [...this.meta].filter(([, r]) => applies(r)).map(([name, r]) => [name, r.item] as const);
      byKind.set(kind, (found = { hooks, categories }));
    }
    return found;
  }

  private async addMeta(event: PresentEvent, categories: readonly (readonly [string, MetaCategory])[]): Promise<void> {
    const metas = event.records.map(() => ({}) as Record<string, unknown>);
    for (const [name, category] of categories) {
      const values = await category.provide(event);
      values.forEach((value, i) => {
        if (value !== undefined && metas[i]) metas[i][name] = value;
      });
    }
    event.records.forEach((record, i) => {
      (record as Record<string, unknown>)._meta = metas[i];
    });
  }
}
