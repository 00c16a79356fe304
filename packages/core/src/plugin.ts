import type { GenerationName } from './generations';
import type { Router } from 'express';
import type { EntityApi } from './app';
import type { ApiRecord, EntityDefinition } from './declarations';
import type { DefinitionAttributes } from './definition/validate-definition';
import type { EntityModel } from './definition/normalize';
import { BootError, declareErrors } from './errors';
import type { PresentKind, RecordHook, RecordHookName, RequestHook } from './hooks';
import type { Languages } from './languages';
import type { Logger } from './logger';
import type { MetaCategory, MetaProvider, PresentHook } from './present';
import type { Repository } from './records/repository';
import type { AuxiliaryTable } from './sql/schema-sync';

/** A route-mounting function; it runs once per path generation. */
export type RouteInstaller = (router: Router, info: { generation: GenerationName }) => void;

/** A route-mounting function for the root of the instance's router; it runs once. */
export type RootRouteInstaller = (router: Router) => void;

/** What a plugin's `setup` may do. Everything is registered before the instance starts. */
export interface PluginApi {
  /** The instance's languages (option `languages`), main first. */
  readonly languages: Languages;
  /** The instance's logger as a child with `{ plugin: <name> }` on every line. */
  readonly logger: Logger;
  /**
   * The same object for every plugin of one instance (each plugin's `api` is its own): the key of a
   * WeakMap through which plugins share services (`filesOf(api)` in `@entity-records/files`).
   */
  readonly instanceKey: object;
  /** Adds an entity type, as if the host had defined it. */
  addEntity(definition: EntityDefinition): void;
  /**
   * Declares the plugin's error codes with their HTTP status (also `definePlugin({ errors })`):
   * the instance's OpenAPI document lists them, and `ApiError` answers with their status.
   */
  declareErrors(codes: Readonly<Record<string, number>>): void;
  /**
   * Adds `key` to `GET /data/publicData.json` (no token; core puts `dataTimestamp`): `provide` is
   * called for every request and must not depend on a user. A key given twice is refused.
   */
  addPublicData(key: string, provide: () => unknown): void;
  /**
   * Declares the options a plugin adds to field or entity definitions (by declaration merging),
   * each with a JSON Schema: definitions are checked against it at start-up.
   */
  addDefinitionAttributes(attributes: DefinitionAttributes): void;
  /**
   * Rewrites the definitions (core's, the host's and every plugin's) before they are checked
   * and resolved; for example adds fields. Transforms run in registration order.
   */
  transformDefinitions(fn: (definitions: readonly EntityDefinition[]) => EntityDefinition[]): void;
  /** Runs for every entity type once the definitions are resolved (the host's and plugins'). */
  onEntity(fn: (model: EntityModel) => void): void;
  /** Adds a record hook for one entity type, or `*` for all. Unknown hook names throw at start-up. */
  onRecord(name: RecordHookName, entity: string, hook: RecordHook): void;
  /**
   * Runs for every authenticated request before its route: reads headers or query parameters
   * into `ctx.variables`, or refuses the request by throwing an `ApiError`.
   */
  onRequest(hook: RequestHook): void;
  /** Shapes the records of every response page of one entity type, or `*` for all. */
  onPresent(entity: string, hook: PresentHook): void;
  /**
   * Adds a `_meta` category, filled when a request sends `With-Meta: true` (or `1`): a provider
   * function, or a category with the fields it needs, the responses it applies to and a schema.
   */
  addMetaCategory(name: string, category: MetaCategory | MetaProvider): void;
  /** Documents a header or query parameter on the record operations of the given kinds. */
  addParameter(parameter: RequestParameter): void;
  /**
   * The repository of an entity type, once the instance is built: call it in hooks, routes and
   * providers, not during `setup`.
   */
  repository<TRecord extends ApiRecord = ApiRecord>(entity: string): Repository<TRecord>;
  /** Adds routes under both `/api/` and `/api/v1/`, behind token authentication, before the record routes. */
  addRoutes(install: RouteInstaller): void;
  /** Adds routes that need no token (public links), under both bases. */
  addPublicRoutes(install: RouteInstaller): void;
  /**
   * Adds routes at the root of the instance's router, beside `/api` and `/apidocs` (public links
   * such as `/sharings/{id}.pdf`): no token check and no body parsing; errors get the usual body.
   */
  addRootRoutes(install: RootRouteInstaller): void;
  /**
   * A path below the bases (`/File/upload`) whose request body the plugin's own route reads
   * (multipart): core neither parses it as JSON nor refuses it with 415 there.
   */
  addRawBodyPath(path: string): void;
  /** A table the plugin owns outside the entity definitions; schema sync creates it. */
  addTable(table: AuxiliaryTable): void;
  /** Values shown under `app` in the metadata (`GET /api/metadata`), such as `thumbnailTypes`. */
  addAppMetadata(values: Record<string, unknown>): void;
  /** Merges paths, schemas or tags into the OpenAPI document. */
  addOpenApi(fragment: OpenApiFragment): void;
  /** Runs after schema sync, before the first request is served. */
  onReady(fn: () => Promise<void> | void): void;
  /** Runs when the instance closes, in reverse order of registration. */
  onClose(fn: () => Promise<void> | void): void;
  /**
   * The instance being built (repositories, database, options), for routes, hooks and `onReady`
   * work. It exists once `createEntityApi` has returned: calling this inside `setup` throws.
   */
  instance(): EntityApi;
}

/** A header or query parameter a plugin reads, as the OpenAPI document shows it. */
export interface RequestParameter {
  name: string;
  in: 'header' | 'query';
  description: string;
  /** JSON Schema of the value; default `{type: 'string'}`. */
  schema?: Record<string, unknown>;
  /** The operations that take it, by the kind of response they give. */
  on: readonly PresentKind[];
}

export interface OpenApiFragment {
  paths?: Record<string, unknown>;
  /** Paths of root routes (`addRootRoutes`), taken as they are, not repeated under the bases. */
  rootPaths?: Record<string, unknown>;
  components?: { schemas?: Record<string, unknown> };
  tags?: { name: string; description?: string }[];
}

export interface Plugin<TOptions = unknown> {
  name: string;
  /** Names of plugins that must be registered first. */
  dependencies?: string[];
  /**
   * The plugin's error codes (prefixed by its package) with their HTTP status; their types come
   * by declaration merging on `ErrorCodes` (`interface ErrorCodes extends ErrorTable<typeof MY_ERRORS> {}`).
   */
  errors?: Readonly<Record<string, number>>;
  setup(api: PluginApi, options: TOptions): void;
}

/**
 * Declares a plugin: metadata plus one `setup` function.
 *
 * @example
 * export default definePlugin({ name: 'audit-log', setup(api) { api.onRecord('afterCreate', '*', log) } })
 * @see docs/guide/writing-a-plugin.md
 */
export function definePlugin<TOptions = void>(plugin: Plugin<TOptions>): Plugin<TOptions> {
  // Declared as the module loads: its errors may be made before an instance registers it.
  if (plugin.errors) declareErrors(plugin.errors);
  return plugin;
}

/** A plugin with its options, as the host lists it. */
export type PluginEntry = Plugin<unknown> | readonly [Plugin<unknown>, unknown];

/**
 * The host's plugin list with each `[plugin, options]` pair checked against the options that
 * plugin declares (`definePlugin<FilesOptions>`): a typo in an option is a compile error there.
 */
export type CheckedPlugins<TPlugins extends readonly unknown[]> = number extends TPlugins['length']
  ? readonly PluginEntry[] // a list built at run time: its pairs were checked where they were written, if anywhere
  : { [I in keyof TPlugins]: TPlugins[I] extends readonly [Plugin<infer TOptions>, unknown] ? readonly [Plugin<TOptions>, TOptions] : TPlugins[I] };

function checkShape(plugin: Plugin<unknown>): void {
  if (!plugin || typeof plugin.name !== 'string' || typeof plugin.setup !== 'function') {
    throw new BootError('CORE_PLUGIN_INVALID', 'a plugin needs a name and a setup function');
  }
}

function checkDependencies(plugin: Plugin<unknown>, registered: Set<string>): void {
  for (const dep of plugin.dependencies ?? []) {
    if (dep !== '@entity-records/core' && !registered.has(dep)) {
      throw new BootError('CORE_PLUGIN_INVALID', `plugin '${plugin.name}' needs '${dep}' registered before it`);
    }
  }
}

/** Runs each plugin's setup in order, after its checks, with the API `scope` gives that plugin. */
export function registerPlugins(entries: readonly PluginEntry[], scope: (pluginName: string) => PluginApi): void {
  const registered = new Set<string>();
  for (const entry of entries) {
    const [plugin, options] = Array.isArray(entry) ? entry : [entry, undefined];
    checkShape(plugin);
    if (registered.has(plugin.name)) throw new BootError('CORE_PLUGIN_INVALID', `plugin '${plugin.name}' is registered twice`);
    checkDependencies(plugin, registered);
    const api = scope(plugin.name);
    if (plugin.errors) api.declareErrors(plugin.errors);
    plugin.setup(api, options);
    registered.add(plugin.name);
  }
}
