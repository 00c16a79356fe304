import { isLinkField, type MultipleLinkField } from '../definition/model';
import type { Rights, UserAccess } from '../auth/access-control';
import type { EntityModel, FieldModel, SchemaModel } from '../definition/normalize';
import { otherSideOf } from '../sql/join-other-side';

/**
 * A link and the link of its other side state one relation (`Product.brand` and `Brand.products`,
 * both sides of a many-to-many link): a field right on one holds for the other too, when reading
 * (`mayReadField`) and when writing (`assertFieldsEditable`), or the relation would show, or
 * change, through the side the right does not name.
 */

/** The field of another entity type that states the same relation as a link. */
export interface Counterpart {
  entity: string;
  field: string;
}

const counterparts = new WeakMap<EntityModel, Map<FieldModel, Counterpart>>();
/** The schema of each entity type, known once its repository is made (write rules get the model only). */
const schemas = new WeakMap<EntityModel, SchemaModel>();

/** Notes the schema an entity type belongs to (its repository's guard does, when made). */
export function knowSchema(model: EntityModel, schema: SchemaModel): void {
  schemas.set(model, schema);
}

/** The counterpart of a link of `model`, if it has one (`schema` defaults to the one noted for `model`). */
export function counterpartOf(schema: SchemaModel | undefined, model: EntityModel, field: FieldModel): Counterpart | undefined {
  const known = schema ?? schemas.get(model);
  if (!known || !isLinkField(field)) return undefined;
  let found = counterparts.get(model);
  if (!found) counterparts.set(model, (found = linkCounterparts(model, known)));
  return found.get(field);
}

/**
 * For each link of `model`, the field of its target that states the same relation: the single link
 * a one-to-many list mirrors (`Brand.products` ↔ `Product.brand`), the list mirroring a single link,
 * the other side of a many-to-many join table.
 */
function linkCounterparts(model: EntityModel, schema: SchemaModel): Map<FieldModel, Counterpart> {
  const found = new Map<FieldModel, Counterpart>();
  for (const field of model.fields) {
    if (field.system || !isLinkField(field)) continue;
    const target = schema.entity(field.target);
    const other =
      field.linkKind === 'manyToMany'
        ? otherSideOf(schema, field)
        : target?.fields.find((f): boolean => {
            if (f.system || !isLinkField(f) || f.target !== model.name) return false;
            if (field.linkKind === 'belongsTo') return f.linkKind === 'hasMany' && f.foreignColumn === field.column;
            return f.linkKind === 'belongsTo' && f.column === field.foreignColumn;
          });
    if (target && other) found.set(field, { entity: target.name, field: other.name });
  }
  return found;
}

/**
 * How much of a one-to-many list (`Brand.products`) a role reads: it lists records of another
 * type, not a value the record stores, so the role's read level on that type decides (`no`,
 * `own`, `all`); undefined for any other field.
 */
export function oneToManyReach(rights: Pick<Rights, 'scope'>, field: FieldModel): 'no' | 'own' | 'all' | undefined {
  return field.type === 'linkMultiple' && field.linkKind === 'hasMany' ? rights.scope(field.target).read : undefined;
}

/** `judgedOnOtherSide` by field, worked out once (a batch asks it for every item). */
const judgedFields = new WeakMap<MultipleLinkField, boolean>();

/**
 * Whether a write of this multiple link changes records of its target too, so that it is judged on
 * them (`assertOtherSide`): a one-to-many list writes the single link of the records it adds and
 * removes (`Brand.products` sets each product's `brand`); a many-to-many pair is in the lists of
 * both its records, when the target declares the other side (`Category.products` of
 * `Product.categories`; a link to options of a list that declares none changes no option).
 */
export function judgedOnOtherSide(schema: SchemaModel, field: MultipleLinkField): boolean {
  let judged = judgedFields.get(field);
  if (judged === undefined) judgedFields.set(field, (judged = field.linkKind === 'hasMany' || otherSideOf(schema, field) !== undefined));
  return judged;
}

/** The entity type whose records a write of `field` of `model` changes besides its own (`judgedOnOtherSide`), or undefined. */
export function otherSideType(model: EntityModel, field: FieldModel): EntityModel | undefined {
  const schema = schemas.get(model);
  if (!schema || field.type !== 'linkMultiple' || !judgedOnOtherSide(schema, field)) return undefined;
  return schema.entity(field.target);
}

/** Whether the caller may edit every record of a type: no level (`own`) to judge its records by. */
export const editsAll = (access: UserAccess, entity: string): boolean => access.unrestricted || access.scope(entity).edit === 'all';
