import type { SchemaModel } from '../definition/model';
import type { RoleData } from './access-control';

/**
 * A role's field rules as they hold: a field that follows another's rights (`rightsFrom`, such as
 * the language variant `nameDeDE` of `name`) is hidden where the role hides that field, and
 * locked where the role locks it, whatever the role says of the follower itself. A rule that
 * restricts nothing adds nothing; the role's data is not changed.
 */
export function effectiveFieldRules(fields: RoleData['fields'], schema: SchemaModel): RoleData['fields'] {
  const result: RoleData['fields'] = {};
  for (const [entity, rules] of Object.entries(fields)) {
    const model = schema.entity(entity);
    const effective = { ...rules };
    for (const field of model?.fields ?? []) {
      const followed = field.def.rightsFrom === undefined ? undefined : rules[field.def.rightsFrom];
      if (!followed || (followed.read !== false && followed.edit !== false)) continue;
      effective[field.name] = {
        ...effective[field.name],
        ...(followed.read === false && { read: false }),
        ...(followed.edit === false && { edit: false }),
      };
    }
    result[entity] = effective;
  }
  return result;
}
