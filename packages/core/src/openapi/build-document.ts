import { CORE_ERRORS } from '../errors';
import type { SchemaModel } from '../definition/normalize';
import type { OpenApiFragment } from '../plugin';
import { components } from './components';
import { HTTP_METHODS } from './fragment-paths';
import type { ListSizes } from './parameters';
import { GENERATIONS, type GenerationName } from '../generations';
import { publicChangePaths } from './event-paths';
import { generationPaths } from './paths';
import type { Operation, PathItem } from './refs';
import { CORE_TAGS, describeOperations, dropUnusedSchemas, entityTagDescription } from './polish';
import { documentedParameters, type ParameterInput } from './request-parameters';

export interface OpenApiInput extends ListSizes, ParameterInput {
  schema: SchemaModel;
  fragments: readonly OpenApiFragment[];
  info?: { title?: string; version?: string; description?: string; license?: Record<string, unknown>; contact?: Record<string, unknown> };
  publicUrl?: string;
  /** The path generations served; default both. */
  generations?: readonly GenerationName[];
  /** Routes the host mounts itself, read from its JSDoc (`openapi.apis`); absolute paths. */
  hostRoutes?: OpenApiFragment;
  /** Keys present hooks add to the records of an entity type, with their JSON Schema. */
  addedKeys?: (entity: string) => Record<string, Record<string, unknown>>;
  /** The error codes answers may carry: core's and those of the plugins (default core's). */
  errorCodes?: readonly string[];
}



/**
 * Makes every operationId unique: a plugin may reuse an id of core or of another plugin, and an
 * invalid document would break every generated client. Later duplicates get `_2`, `_3`….
 */
function uniqueOperationIds(paths: Record<string, PathItem>): void {
  const seen = new Set<string>();
  for (const [path, item] of Object.entries(paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation || typeof operation.operationId !== 'string') continue;
      let id = operation.operationId;
      for (let n = 2; seen.has(id); n += 1) id = `${operation.operationId}_${n}`;
      seen.add(id);
      if (id !== operation.operationId) paths[path] = { ...paths[path], [method]: { ...operation, operationId: id } };
    }
  }
}

/** Tag names are unique in a document; a later tag of the same name may add a description. */
function uniqueTags(tags: readonly { name: string; description?: string }[]) {
  const byName = new Map<string, { name: string; description?: string }>();
  for (const tag of tags) byName.set(tag.name, { ...byName.get(tag.name), ...tag });
  return [...byName.values()];
}

const COMPOSED = ['properties', 'additionalProperties', 'patternProperties', 'oneOf', 'anyOf', 'allOf', '$ref'];

/**
 * An object schema that names no properties allows any (JSON Schema), but client generators read
 * it as an empty object (`Record<string, never>`): every such schema of the document says
 * `additionalProperties: true` outright (upsert payloads, role scopes, JSON fields, plugins' too).
 * Works on a copy: fragments of plugins stay as they were.
 */
function openObjects(document: Record<string, unknown>): Record<string, unknown> {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!node || typeof node !== 'object') return node;
    const out = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, visit(value)]));
    const type = out.type;
    const isObject = type === 'object' || (Array.isArray(type) && type.includes('object'));
    if (isObject && !COMPOSED.some((key) => key in out)) out.additionalProperties = true;
    return out;
  };
  return visit(document) as Record<string, unknown>;
}

/**
 * The OpenAPI 3.1 document of both generations, built from definitions and plugin fragments.
 *
 * @example
 * const doc = buildOpenApi({ schema: api.schema, fragments: [] })
 * @see docs/reference/core.md
 */
export function buildOpenApi(input: OpenApiInput): Record<string, unknown> {
  const paths: Record<string, PathItem> = {};
  const parameters = documentedParameters(input);
  for (const generation of Object.values(GENERATIONS).filter((g) => (input.generations ?? ['A', 'B']).includes(g.name))) {
    for (const [path, item] of Object.entries(generationPaths(input.schema, input.fragments, { generation, parameters }))) {
      paths[`${generation.base}${path}`] = item;
    }
  }
  Object.assign(paths, publicChangePaths());
  const host = input.hostRoutes ?? {};
  for (const [path, item] of Object.entries(host.paths ?? {})) {
    if (item && typeof item === 'object') paths[path] = { ...paths[path], ...(item as PathItem) };
  }
  for (const fragment of input.fragments) Object.assign(paths, fragment.rootPaths);
  uniqueOperationIds(paths);
  describeOperations(paths);
  const { license, contact } = input.info ?? {};
  const document = openObjects({
    openapi: '3.1.0',
    info: {
      title: input.info?.title ?? 'Entity records API',
      version: input.info?.version ?? '1.0.0',
      description: input.info?.description ?? servedDescription(input.generations ?? ['A', 'B']),
      ...(license && { license }),
      ...(contact && { contact }),
    },
    servers: [{ url: input.publicUrl ?? '/' }],
    security: [{ tokenAuth: [] }, { cookieAuth: [] }],
    tags: uniqueTags([
      { name: 'Auth', description: CORE_TAGS.Auth },
      { name: 'Metadata', description: CORE_TAGS.Metadata },
      { name: 'Records', description: CORE_TAGS.Records },
      ...[...input.schema.entities.values()].map((m) => ({ name: m.name, description: m.def.description ?? CORE_TAGS[m.name] ?? entityTagDescription(m.name) })),
      ...[...input.fragments, host].flatMap((f) => f.tags ?? []),
    ]),
    paths,
    components: components(input.schema, {
      fragments: [...input.fragments, host],
      sizes: input,
      parameters,
      metaCategories: input.metaCategories,
      addedKeys: input.addedKeys,
      errorCodes: input.errorCodes ?? Object.keys(CORE_ERRORS),
    }),
  });
  dropUnusedSchemas(document);
  return document;
}

/** The default description names the bases the instance serves, and only those. */
function servedDescription(generations: readonly GenerationName[]): string {
  const bases = Object.values(GENERATIONS)
    .filter((g) => generations.includes(g.name))
    .map((g) => `${g.base}/ (generation ${g.name})`);
  return `Records of every entity type under ${bases.join(' and ')}.`;
}
