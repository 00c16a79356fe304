import { isStoredField, type EntityModel, type LinkEnd, type LinkField, type StoredField } from '../definition/model';
import { ApiError } from '../errors';

/** `brand: {…}` or `categories: [{…}, …]` in a body: records to find or create and link. */
export type LinkObjects<TField extends LinkEnd = LinkField> = Map<TField, unknown[]>;

const SIMPLE_TYPES = new Set(['varchar', 'text', 'int', 'float', 'bool', 'date', 'datetime', 'enum']);

const invalid = (field: LinkEnd, message: string) =>
  new ApiError('CORE_VALIDATION_FAILED', `${field.name}: ${message}`, {
    details: { issues: [{ path: [field.name], code: 'invalid_link_object', message }] },
  });

/** What is wrong inside one link object, at `path` within the object (its place in the body is added where it is resolved). */
const invalidIn = (field: LinkEnd, message: string, path: string[]) =>
  new ApiError('CORE_VALIDATION_FAILED', `${field.name}: ${message}`, {
    details: { issues: [{ path, code: 'invalid_link_object', message }] },
  });

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const linkNamesByModel = new WeakMap<EntityModel, Set<string>>();

/** The names under which a body may carry link objects (`brand`, `categories`): links whose name is not their key. */
function linkNames(model: EntityModel): Set<string> {
  let names = linkNamesByModel.get(model);
  if (!names) {
    names = new Set(model.fields.filter((f) => !f.system && (f.type === 'link' || f.type === 'linkMultiple') && f.key !== f.name).map((f) => f.name));
    linkNamesByModel.set(model, names);
  }
  return names;
}

/** Whether a body holds a key under which it may carry link objects (checked per upsert item: no array made). */
function hasLinkName(model: EntityModel, body: Record<string, unknown>): boolean {
  const names = linkNames(model);
  if (names.size === 0) return false;
  for (const key in body) if (Object.hasOwn(body, key) && names.has(key)) return true;
  return false;
}

/**
 * The most link objects one record's body may carry, over all its links. Each is looked up, and
 * perhaps created, in the write's one transaction (CONTRACT §7): on SQLite, which serves every
 * request on one connection, 1,000 of them hold the others for about 200 ms.
 */
const MAX_LINK_OBJECTS = 1000;

/**
 * Takes link objects out of a body. A single link accepts one object (`brand: {name: 'Acme'}`),
 * a multiple link an array whose items are objects or ids. The rest of the body is returned (the
 * body itself when it has no link objects: callers only read it).
 */
export function splitLinkObjects(model: EntityModel, body: Record<string, unknown>): { data: Record<string, unknown>; objects: LinkObjects } {
  // Most bodies name links by id only: then `data` is the body itself (upsert asks per item).
  if (!hasLinkName(model, body)) return { data: body, objects: new Map() };
  const data: Record<string, unknown> = {};
  const objects: LinkObjects = new Map();
  let count = 0;
  for (const [key, value] of Object.entries(body)) {
    const field = model.field.get(key);
    if (!field || field.system || (field.type !== 'link' && field.type !== 'linkMultiple') || field.key === key) {
      data[key] = value;
      continue;
    }
    if (field.key in body) throw invalid(field, `send either ${field.name} or ${field.key}, not both`);
    if (field.type === 'link') {
      if (value === null) data[field.key] = null;
      else if (isPlainObject(value)) objects.set(field, [value]);
      else throw invalid(field, 'a single link takes an object of fields');
    } else {
      if (!Array.isArray(value) || !value.every((v) => isPlainObject(v) || typeof v === 'string')) {
        throw invalid(field, 'a multiple link takes an array of objects or ids');
      }
      objects.set(field, value);
    }
    for (const item of objects.get(field) ?? []) if (isPlainObject(item)) count += 1;
    if (count > MAX_LINK_OBJECTS) throw invalid(field, `a record's body takes at most ${MAX_LINK_OBJECTS} link objects`);
  }
  return { data, objects };
}

/** One object's fields, checked to be simple values of the target entity (one level only); issues are named within the object. */
export function matchFields(field: LinkEnd, target: EntityModel, object: Record<string, unknown>): [StoredField, unknown][] {
  const entries = Object.entries(object);
  if (entries.length === 0) throw invalidIn(field, 'an empty object matches nothing', []);
  return entries.map(([key, value]) => {
    if (typeof value === 'object' && value !== null) throw invalidIn(field, `nested objects are not supported ('${key}')`, [key]);
    const f = target.byKey.get(key);
    if (!f || f.system || f.def.writeOnly || !isStoredField(f) || !SIMPLE_TYPES.has(f.type)) {
      throw invalidIn(field, `'${key}' is not a simple field of ${target.name}`, [key]);
    }
    return [f, value];
  });
}

export const severalMatches = (field: LinkEnd, target: EntityModel) =>
  new ApiError('CORE_CONFLICT', `Several ${target.name} records match the object given for '${field.name}'`, {
    details: { field: field.name, entity: target.name },
  });
