import type { EntityModel, FieldModel } from '../definition/model';
import { hiddenKeys } from '../present';
import type { ReadBack } from '../sql/change-store';
import type { PreparedStatement } from '../sql/prepared';
import { decodedFields, outputKeys, selectById, selectByIdStatement } from '../sql/read-query';
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
  /**
   * The same select, run by the statement that writes the record (`ReadBack`). None when it
   * joins the record's own table (a link to its own entity type, `createdBy` of `User`): that
   * join would read the linked name as it was before the write.
   */
  readonly readBack?: ReadBack;
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
  const shapeKey = readShapeKey(shape);
  const joinsOwnTable = names !== false && read.some((f) => f.type === 'link' && f.target === model.name);
  return {
    read,
    keys,
    decoded: decodedFields(sql.dialect, read),
    byId: () => sql.statements.get(`byId:${model.table}:${shapeKey}`, () => selectByIdStatement(sql, model, { fields: read, names })),
    readBack: joinsOwnTable
      ? undefined
      : {
          key: shapeKey,
          select: (param, source) => selectById(sql, model, { fields: read, names, id: param('id') }).from(sql.db.raw('?? as ??', [source, model.table])),
        },
  };
}
