import { defineEntity } from '../definition/define-entity';

/**
 * Rights per entity type (`scopes`) and restrictions per field (`fields`):
 * `scopes: {Product: {create: true, read: 'all', edit: 'own', delete: 'no', stream: false}}`,
 * `fields: {Product: {price: {read: true, edit: false}}}`.
 */
export const RoleEntity = defineEntity({
  name: 'Role',
  fields: {
    name: { type: 'varchar', required: true, unique: true },
    scopes: { type: 'jsonObject', default: {} },
    fields: { type: 'jsonObject', default: {} },
  },
});
