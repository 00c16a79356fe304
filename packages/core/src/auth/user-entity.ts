import { defineEntity } from '../definition/define-entity';

/** Users who sign in. `password` is accepted on write, stored as a scrypt hash, never returned. */
export const UserEntity = defineEntity({
  name: 'User',
  fields: {
    userName: { type: 'varchar', required: true, unique: true, maxLength: 100 },
    name: { type: 'varchar', maxLength: 255 },
    password: { type: 'varchar', writeOnly: true, maxLength: 255 },
    isAdmin: { type: 'bool', default: false },
    isActive: { type: 'bool', default: true },
    roles: { type: 'linkMultiple', entity: 'Role' },
  },
});
