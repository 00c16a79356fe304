export { createEntityApi, ensureAdmin } from './app';
export type { EntityApi, EntityApiOptions } from './app';
export type { AuthenticateOptions, EntityJobs, EntityNames, EntityNamed, EntityRepository, TypedEntityApi } from './app-types';
export { defineEntity } from './definition/define-entity';
export { normalizeDefinitions, snakeCase } from './definition/normalize';
export { isLinkField, isStoredField } from './definition/model';
export type {
  ColumnField,
  ComputedField,
  EntityModel,
  FieldModel,
  HasManyField,
  LinkEnd,
  LinkField,
  LinkKind,
  ManyToManyField,
  MultipleLinkField,
  SchemaModel,
  SingleLinkField,
  StoredField,
} from './definition/model';
export { validateDefinition, validateDefinitions } from './definition/validate-definition';
export type { DefinitionAttributes, ValidateDefinitionsOptions } from './definition/validate-definition';
export { loadDefinitions } from './definition/load-definitions';
export type { LoadDefinitionsOptions } from './definition/load-definitions';
export { readDefinitionsFile } from './definition/read-definitions-file';
export { buildMetadata } from './definition/metadata';
export * from './declarations';
export { ApiError, BootError, BOOT_ERROR_CODES, CORE_ERRORS, createError, declareErrors, errorStatuses, objectBody, toApiError } from './errors';
export type { ErrorCode, ErrorCodes, ErrorTable, BootErrorCode, ValidationIssue } from './errors';
export { definePlugin } from './plugin';
export type { Plugin, PluginApi, PluginEntry, CheckedPlugins, OpenApiFragment, RouteInstaller, RequestParameter } from './plugin';
export { errorResponses, responseRef } from './openapi/error-responses';
export { idempotentOperation } from './openapi/idempotency';
export { ref as schemaRef, param as parameterRef, json as jsonContent } from './openapi/refs';
export { RECORD_HOOKS, APP_HOOKS, PRESENT_KINDS } from './hooks';
export type { RecordHook, RecordHookEvent, RecordHookName, AppHookName, PresentKind, RequestEvent, RequestHook } from './hooks';
export type { MetaCategory, MetaProvider, PresentEvent, PresentHook, PresentInfo, PresentLink } from './present';
export { Languages } from './languages';
export { systemContext } from './context';
export type { RequestContext, RequestContextVariables, ContextUser } from './context';
export { Repository } from './records/repository';
export type { FindParams, FindResult, RestoreResult } from './records/repository';
export type { SchemaStep, AuxiliaryTable } from './sql/schema-sync';
export { WHERE_OPERATORS } from './sql/where';
export type { WhereItem } from './sql/where';
export { errorHandler, consoleLogger } from './http/error-handler';
export { answerClientErrors } from './http/client-errors';
export { bornWithAppPrototypes, createHttpServer } from './http/server';
export { sendRecord } from './http/record-routes';
export type { Logger, LogFn } from './logger';
export { hashPassword, verifyPassword } from './auth/password';
export { UserEntity } from './auth/user-entity';
export { ExtensibleEnumEntity, ExtensibleEnumOptionEntity } from './builtin-entities';
export { RoleEntity } from './auth/role-entity';
export { UserAccess, FULL_ACCESS, NO_ACCESS } from './auth/access-control';
export type { AccessLevel, ScopeAccess, FieldAccess, RoleData } from './auth/access-control';
export { CORE_ENTITIES } from './core-entities';
export { AttributeEntity, MeasureEntity, UnitEntity, ATTRIBUTE_TYPES } from './attributes/entities';
export type { AttributeType } from './attributes/entities';
export type { V1AttributesFormat } from './attributes/service';
export { JobEntity, JOB_STATUSES } from './jobs/job-entity';
export type { JobHandler, JobRun } from './jobs/job-service';
export { JobInterrupted } from './jobs/job-service';
export type { JobCounts } from './jobs/job-counts';
export type { JobStatus } from './jobs/job-entity';
export type { RootRouteInstaller } from './plugin';
export { requestContext } from './http/request-context';
export { toHandler } from './http/to-handler';
export { headerText } from './http/header-text';
export { idempotent, claimIdempotency, idempotencyKeyOf } from './http/idempotency';
export { uuidv7 } from './util/uuid';
export { MAX_JSON_DEPTH, nestsDeeper } from './util/json-depth';
export { ConcurrencyLimit } from './util/concurrency-limit';
export type { ConcurrencyLimitOptions } from './util/concurrency-limit';
export { nowDateTime, formatDateTime } from './time';
export type { LoginThrottle, ThrottleOptions } from './auth/login-throttle';
export type { Database } from './sql/database';
export { isForbiddenAddress } from './net/address-guard';
export { allowedHostSet, guardedLookup, hostKey, isGuardRefusal, lookupFor, refusedHost } from './net/outgoing-guard';
export { WebhookEntity, WebhookDeliveryEntity, WEBHOOK_ACTIONS, DELIVERY_STATUSES } from './events/webhook-entities';
export type { DeliveryStatus } from './events/webhook-entities';
export { signature as webhookSignature } from './events/webhook-sender';
