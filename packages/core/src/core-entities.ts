import { ATTRIBUTE_ENTITIES } from './attributes/entities';
import { RoleEntity } from './auth/role-entity';
import { UserEntity } from './auth/user-entity';
import { ExtensibleEnumEntity, ExtensibleEnumOptionEntity } from './builtin-entities';
import type { EntityDefinition } from './declarations';
import { JobEntity } from './jobs/job-entity';
import { WebhookDeliveryEntity, WebhookEntity } from './events/webhook-entities';

/** The entity types every instance has, before the host's and the plugins'. */
export const CORE_ENTITIES: readonly EntityDefinition[] = [
  UserEntity,
  RoleEntity,
  JobEntity,
  ExtensibleEnumEntity,
  ExtensibleEnumOptionEntity,
  ...ATTRIBUTE_ENTITIES,
  WebhookEntity,
  WebhookDeliveryEntity,
];
