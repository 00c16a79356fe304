import { HTTP_METHODS } from './fragment-paths';
import type { Operation, PathItem } from './refs';

/** Tag descriptions of core's tags and entity types (a definition's own description wins). */
export const CORE_TAGS: Record<string, string> = {
  Auth: 'Sign-in with Basic credentials or a cookie, the session of a token, sign-out.',
  Metadata: 'The entity types, fields and links the caller may read, and the instance languages.',
  Records: 'Operations over several entity types: upsert, upsertAsync, entityMassUpdate, entityRestore, linked records.',
  User: 'The users who sign in; admins manage them. The password is write-only.',
  Role: 'Rights per entity type (scopes) and per field; users get the most permissive of their roles.',
  Job: 'Background work started by upsertAsync, entityMassUpdate and the host\'s own job types: poll a job until its status is Success, Failed or Canceled, its counts meanwhile; page its result with /Job/{id}/result; PATCH {"status": "Canceled"} cancels a pending one.',
  ExtensibleEnum: 'Option lists that link fields to ExtensibleEnumOption name by their code.',
  ExtensibleEnumOption: 'The options of an option list; a code is unique within its list.',
  Attribute: 'Virtual fields of the entity types with attributes, valued per record.',
  Measure: 'Measures (weight) whose units unit-bearing attributes use.',
  Unit: 'The units of a measure, with their factor; one is the default.',
};

/** The description of a tag without one: what its operations are. */
export const entityTagDescription = (name: string) => `The records of ${name}: list, read, create, update and delete, in both path generations.`;

const statusWords = (responses: Record<string, unknown>) =>
  Object.keys(responses)
    .filter((status) => /^[45]/.test(status))
    .sort();

/**
 * An operation's description, when its author gave none: the summary, where it is served, what
 * authenticates it and which errors it documents.
 */
function describeOperation(path: string, operation: Operation): string {
  const summary = String(operation.summary ?? 'This operation').replace(/\.?$/, '.');
  const where = path.startsWith('/api/v1/') ? ' Generation B (/api/v1/).' : path.startsWith('/api/') ? ' Generation A (/api/).' : '';
  const auth = Array.isArray(operation.security) && operation.security.length === 0 ? ' Needs no token.' : '';
  const errors = statusWords((operation.responses ?? {}) as Record<string, unknown>);
  const answers = errors.length ? ` Errors (${errors.join(', ')}) have the body {"error": {code, message, details}}.` : '';
  return `${summary}${where}${auth}${answers}`;
}

/** Every operation gets a description (linters and generated clients show it). */
export function describeOperations(paths: Record<string, PathItem>): void {
  for (const [path, item] of Object.entries(paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Operation | undefined;
      if (operation && typeof operation.description !== 'string') item[method] = { ...operation, description: describeOperation(path, operation) };
    }
  }
}

/** `#/components/schemas/X` references anywhere in a value. */
function schemaRefs(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) schemaRefs(v, into);
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) into.add(v.slice('#/components/schemas/'.length));
      else schemaRefs(v, into);
    }
  }
}

/** Leaves out the schemas nothing refers to (a plugin's request body no route uses): linters flag them. */
export function dropUnusedSchemas(document: Record<string, unknown>): void {
  const components = document.components as { schemas?: Record<string, unknown> } | undefined;
  const schemas = components?.schemas;
  if (!schemas) return;
  const { components: _all, ...rest } = document;
  const used = new Set<string>();
  schemaRefs(rest, used);
  schemaRefs({ ...components, schemas: undefined }, used);
  // Schemas used by used schemas, until nothing is added.
  for (let size = -1; size !== used.size; ) {
    size = used.size;
    for (const name of [...used]) schemaRefs(schemas[name], used);
  }
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}
