import type { EntityApi } from './app';
import type { ApiRecord, EntityDefinition } from './declarations';
import type { EntityModel } from './definition/normalize';
import { validateDefinition, type DefinitionAttributes } from './definition/validate-definition';
import { BootError, declareErrors } from './errors';
import { HookRegistry, type RequestHook } from './hooks';
import type { Languages } from './languages';
import { consoleLogger, type Logger } from './logger';
import type { OpenApiFragment, PluginApi, RequestParameter, RootRouteInstaller, RouteInstaller } from './plugin';
import { Presenter } from './present';
import { TOKEN_TABLE } from './sql/auth-store';
import { CHANGE_TABLE } from './sql/change-store';
import { DELIVERY_INDEXES } from './sql/delivery-store';
import { LISTENING_TABLE } from './sql/listening-store';
import { IDEMPOTENCY_TABLE } from './sql/idempotency-store';
import type { Repository } from './records/repository';
import type { AuxiliaryTable } from './sql/schema-sync';
import { THROTTLE_TABLES } from './sql/throttle-store';

/** Merges one plugin's definition options into those declared before; each name is declared once. */
function mergeAttributes(into: Required<DefinitionAttributes>, added: DefinitionAttributes): void {
  for (const kind of ['field', 'entity'] as const) {
    for (const [name, schema] of Object.entries(added[kind] ?? {})) {
      if (name in into[kind]) throw new BootError('CORE_PLUGIN_INVALID', `the ${kind} option '${name}' is declared twice`);
      into[kind][name] = schema;
    }
  }
}

/** Express matches routes case-insensitively and with or without a trailing slash: so do raw body paths. */
const rawPathKey = (path: string) => path.replace(/\/+$/, '').toLowerCase();

/** Gathers what plugins register; the instance is built from it. */
export class Registry implements PluginApi {
  entities: EntityDefinition[] = [];
  attributes: Required<DefinitionAttributes> = { field: {}, entity: {} };
  transforms: ((definitions: readonly EntityDefinition[]) => EntityDefinition[])[] = [];
  entityCallbacks: ((model: EntityModel) => void)[] = [];
  hooks = new HookRegistry();
  requestHooks: RequestHook[] = [];
  presenter: Presenter;
  parameters: RequestParameter[] = [];
  routes: RouteInstaller[] = [];
  publicRoutes: RouteInstaller[] = [];
  rootRoutes: RootRouteInstaller[] = [];
  rawBodyPaths = new Set<string>();
  appMetadata: Record<string, unknown> = {};
  /** The instance, once built (`instance()`). */
  built?: EntityApi;
  tables: AuxiliaryTable[] = [TOKEN_TABLE, ...THROTTLE_TABLES, CHANGE_TABLE, LISTENING_TABLE, DELIVERY_INDEXES, IDEMPOTENCY_TABLE];
  fragments: OpenApiFragment[] = [];
  readyCallbacks: (() => Promise<void> | void)[] = [];
  /** The error codes the plugins of this instance declared. */
  errorCodes: string[] = [];
  /** What plugins add to `GET /data/publicData.json`, by key. */
  publicData = new Map<string, () => unknown>();
  closeCallbacks: (() => Promise<void> | void)[] = [];

  constructor(
    readonly languages: Languages,
    private readonly lookup: (entity: string) => Repository | undefined,
  ) {
    this.presenter = new Presenter((entity) => this.repository(entity));
  }

  /** Where each entity type came from: `core`, `the host` or a plugin's name. */
  private readonly origins = new Map<string, string>();

  addEntity = (d: EntityDefinition) => this.addEntityFrom(d, 'the host');

  /** Adds a definition from `origin`; a name another origin already took is a start-up error that says whose it is. */
  addEntityFrom(definition: EntityDefinition, origin: string): void {
    const name = typeof definition?.name === 'string' ? definition.name : undefined;
    const taken = name === undefined ? undefined : this.origins.get(name);
    if (taken !== undefined && taken !== origin) {
      const message =
        taken === 'core'
          ? `entity '${name}' is built in (core defines it, see CORE_ENTITIES): give ${origin === 'the host' ? 'yours' : `the one of ${origin}`} another name`
          : `entity '${name}' of ${origin} is already defined by ${taken}`;
      throw new BootError('CORE_DEFINITION_INVALID', message);
    }
    if (name !== undefined) this.origins.set(name, origin);
    this.entities.push(definition);
  }

  addDefinitionAttributes = (attributes: DefinitionAttributes) => mergeAttributes(this.attributes, attributes);
  transformDefinitions = (fn: (definitions: readonly EntityDefinition[]) => EntityDefinition[]) => void this.transforms.push(fn);
  onEntity = (fn: (model: EntityModel) => void) => void this.entityCallbacks.push(fn);
  onRecord: PluginApi['onRecord'] = (name, entity, hook) => this.hooks.add(name, entity, hook);
  onRequest = (hook: RequestHook) => void this.requestHooks.push(hook);
  onPresent: PluginApi['onPresent'] = (entity, hook) => this.presenter.addHook(entity, hook);
  addMetaCategory: PluginApi['addMetaCategory'] = (name, category) => this.presenter.addMetaCategory(name, category);
  addRoutes = (install: RouteInstaller) => void this.routes.push(install);
  addPublicRoutes = (install: RouteInstaller) => void this.publicRoutes.push(install);
  addRootRoutes = (install: RootRouteInstaller) => void this.rootRoutes.push(install);
  addRawBodyPath = (path: string) => void this.rawBodyPaths.add(rawPathKey(path));
  addAppMetadata = (values: Record<string, unknown>) => void Object.assign(this.appMetadata, values);
  instance = (): EntityApi => {
    if (!this.built) throw new BootError('CORE_PLUGIN_INVALID', 'the instance does not exist yet: call instance() from routes, hooks or onReady');
    return this.built;
  };
  addTable = (table: AuxiliaryTable) => void this.tables.push(table);
  addOpenApi = (fragment: OpenApiFragment) => void this.fragments.push(fragment);
  onReady = (fn: () => Promise<void> | void) => void this.readyCallbacks.push(fn);
  onClose = (fn: () => Promise<void> | void) => void this.closeCallbacks.push(fn);

  addParameter = (parameter: RequestParameter) => {
    const same = this.parameters.find((p) => p.in === parameter.in && p.name.toLowerCase() === parameter.name.toLowerCase());
    if (same) throw new BootError('CORE_PLUGIN_INVALID', `the ${parameter.in} parameter '${parameter.name}' is documented twice`);
    this.parameters.push(parameter);
  };

  readonly instanceKey: object = Object.freeze({});
  /** The instance's logger; plugins get a child of it through `forPlugin`. */
  logger: Logger = consoleLogger;

  /** The API one plugin's `setup` gets: its entities remember whose they are, its logger names it. */
  forPlugin(name: string, logger: Logger): PluginApi {
    const scoped = Object.create(this) as Registry;
    return Object.assign(scoped, {
      logger,
      addEntity: (definition: EntityDefinition) => this.addEntityFrom(definition, `plugin '${name}'`),
    });
  }

  addPublicData(key: string, provide: () => unknown): void {
    if (key === 'dataTimestamp' || this.publicData.has(key)) throw new BootError('CORE_PLUGIN_INVALID', `public data '${key}' is given twice`);
    this.publicData.set(key, provide);
  }

  declareErrors(codes: Readonly<Record<string, number>>): void {
    declareErrors(codes);
    for (const code of Object.keys(codes)) if (!this.errorCodes.includes(code)) this.errorCodes.push(code);
  }

  repository<TRecord extends ApiRecord = ApiRecord>(entity: string): Repository<TRecord> {
    const repository = this.lookup(entity);
    if (!repository) throw new BootError('CORE_CONFIG_INVALID', `unknown entity type '${entity}' (or the instance is not built yet)`);
    return repository as unknown as Repository<TRecord>;
  }

  isRawBodyPath(path: string): boolean {
    return this.rawBodyPaths.has(rawPathKey(path));
  }

  /** Every definition, checked on its own, then rewritten by the plugins' transforms in order. */
  definitions(): EntityDefinition[] {
    for (const def of this.entities) validateDefinition(def, this.attributes);
    return this.transforms.reduce<EntityDefinition[]>((defs, fn) => fn(defs), [...this.entities]);
  }
}
