import type { Knex } from 'knex';
import type { EntityModel, FieldModel } from '../definition/normalize';
import { ApiError } from '../errors';
import { live } from './read-query';
import type { SqlContext } from './sql-context';

/** `brand: {…}` or `categories: [{…}, …]` in a body: records to find or create and link. */
export type LinkObjects = Map<FieldModel, unknown[]>;

const SIMPLE_TYPES = new Set(['varchar', 'text', 'int', 'float', 'bool', 'date', 'datetime', 'enum']);
export const OPTION_ENTITY = 'ExtensibleEnumOption';

const invalid = (field: FieldModel, message: string) =>
  new ApiError('CORE_VALIDATION_FAILED', `${field.name}: ${message}`, {
    details: { issues: [{ path: [field.name], code: 'invalid_link_object', message }] },
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

/**
 * Takes link objects out of a body. A single link accepts one object (`brand: {name: 'Acme'}`),
 * a multiple link an array whose items are objects or ids. The rest of the body is returned (the
 * body itself when it has no link objects: callers only read it).
 */
export function splitLinkObjects(model: EntityModel, body: Record<string, unknown>): { data: Record<string, unknown>; objects: LinkObjects } {
  // Most bodies name links by id only: then `data` is the body itself (upsert asks per item).
  const names = linkNames(model);
  if (!Object.keys(body).some((key) => names.has(key))) return { data: body, objects: new Map() };
  const data: Record<string, unknown> = {};
  const objects: LinkObjects = new Map();
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
  }
  return { data, objects };
}

/** One object's fields, checked to be simple values of the target entity (one level only). */
export function matchFields(field: FieldModel, target: EntityModel, object: Record<string, unknown>): [FieldModel, unknown][] {
  const entries = Object.entries(object);
  if (entries.length === 0) throw invalid(field, 'an empty object matches nothing');
  return entries.map(([key, value]) => {
    if (typeof value === 'object' && value !== null) throw invalid(field, `nested objects are not supported ('${key}')`);
    const f = target.byKey.get(key);
    if (!f || f.system || f.def.writeOnly || !SIMPLE_TYPES.has(f.type)) {
      throw invalid(field, `'${key}' is not a simple field of ${target.name}`);
    }
    return [f, value];
  });
}

/** The id of the option list a link to ExtensibleEnumOption is bound to. */
export async function optionListId(sql: SqlContext<Knex.Transaction>, field: FieldModel): Promise<string | undefined> {
  const { db: trx, schema, dialect } = sql;
  const code = field.def.extensibleEnum;
  if (!code || field.target !== OPTION_ENTITY) return undefined;
  const lists = schema.entity('ExtensibleEnum') as EntityModel;
  const row = await trx(lists.table).select('id').where({ code, deleted: live(dialect) }).first();
  if (!row) {
    throw new ApiError('CORE_INVALID_LINK', `Option list '${code}' of ${field.name} does not exist`, { details: { field: field.key, list: code } });
  }
  return row.id as string;
}

/** Plain option ids written to a list-bound link must belong to that list. */
export async function assertOptionsInList(sql: SqlContext<Knex.Transaction>, values: Map<FieldModel, unknown>): Promise<void> {
  const { db: trx, schema, dialect } = sql;
  for (const [field, value] of values) {
    if (!field.def.extensibleEnum || field.target !== OPTION_ENTITY || value === null) continue;
    const ids = [...new Set(Array.isArray(value) ? (value as string[]) : [value as string])];
    if (ids.length === 0) continue;
    const listId = await optionListId(sql, field);
    const options = schema.entity(OPTION_ENTITY) as EntityModel;
    const found = await trx(options.table).select('id').whereIn('id', ids).andWhere({ extensible_enum_id: listId, deleted: live(dialect) });
    const inList = new Set(found.map((r: { id: string }) => r.id));
    const stray = ids.find((id) => !inList.has(id));
    if (stray) {
      throw new ApiError('CORE_INVALID_LINK', `Option '${stray}' is not in the list '${field.def.extensibleEnum}' of ${field.name}`, {
        details: { entity: OPTION_ENTITY, field: field.key, ids: [stray] },
      });
    }
  }
}

/** What a found record must match: the values of its fields, the option list it sits in, and what the caller may list. */
interface RecordMatch {
  fields: [FieldModel, unknown][];
  listId: string | undefined;
  restrict?: (qb: Knex.QueryBuilder) => void;
}

/** Ids of live records of `target` whose fields equal the given values (and that sit in `listId`; `restrict`: the caller's own). */
export async function findMatching(sql: SqlContext<Knex.Transaction>, target: EntityModel, { fields, listId, restrict }: RecordMatch): Promise<string[]> {
  const { db: trx, dialect } = sql;
  const qb = trx(target.table).select('id').where('deleted', live(dialect) as never).orderBy('id').limit(2);
  restrict?.(qb);
  for (const [f, value] of fields) {
    if (value === null) qb.whereNull(f.column as string);
    else qb.where(f.column as string, dialect.toDb(f.type, value) as never);
  }
  if (listId) qb.where('extensible_enum_id', listId);
  return (await qb).map((r: { id: string }) => r.id);
}

export const severalMatches = (field: FieldModel, target: EntityModel) =>
  new ApiError('CORE_CONFLICT', `Several ${target.name} records match the object given for '${field.name}'`, {
    details: { field: field.name, entity: target.name },
  });
