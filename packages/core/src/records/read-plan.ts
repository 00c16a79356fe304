import type { EntityModel, FieldModel } from '../definition/model';
import { hiddenKeys } from '../present';
import type { PreparedStatement } from '../sql/prepared';
import { decodedFields, outputKeys, selectByIdStatement } from '../sql/read-query';
import type { SqlContext } from '../sql/sql-context';

/** The fields a read returns, and `extra` ones read for the present stage (kept under hidden keys). */
export interface ReadShape {
  fields: readonly FieldModel[];
  extra?: readonly FieldModel[];
  /** false: single links read their stored id only, not the linked record's name. */
  names?: false;
}

/**
 * What reading records of one shape needs, whatever the record and the caller: worked out once
 * per entity type and shape (see `Repository.readPlan`), never per request.
 */
export interface ReadPlan {
  /** The fields read: those returned, then the extra ones. */
  readonly read: readonly FieldModel[];
  /** The keys of a record as returned (extra fields under their hidden keys), in order. */
  readonly keys: readonly string[];
  /** The fields whose driver values are decoded. */
  readonly decoded: readonly FieldModel[];
  /** The select of one live record by id, with its version, compiled once. */
  byId(): PreparedStatement;
}

/** The key of a shape in the cache of read plans. */
export function readShapeKey({ fields, extra = [], names }: ReadShape): string {
  let key = names === false ? 'ids:' : 'names:';
  for (const f of fields) key += `${f.key},`;
  if (extra.length) key += '+';
  for (const f of extra) key += `${f.key},`;
  return key;
}

/** Works out the plan of reads of one shape. */
export function makeReadPlan(sql: SqlContext, model: EntityModel, shape: ReadShape): ReadPlan {
  const { fields, extra = [], names } = shape;
  const read = extra.length ? [...fields, ...extra] : fields;
  const keys = extra.length ? [...outputKeys(fields), ...hiddenKeys(extra, fields)] : outputKeys(fields);
  const key = `byId:${model.table}:${readShapeKey(shape)}`;
  return {
    read,
    keys,
    decoded: decodedFields(sql.dialect, read),
    byId: () => sql.statements.get(key, () => selectByIdStatement(sql, model, { fields: read, names })),
  };
}
