/** Public types of entity definitions. Plugins extend the empty interfaces by declaration merging. */

import type { RequestContext } from './context';
import type { RecordHook, RecordHookName } from './hooks';
import type { WhereItem } from './sql/where-types';

export const FIELD_TYPES = [
  'varchar',
  'text',
  'int',
  'float',
  'bool',
  'date',
  'datetime',
  'enum',
  'multiEnum',
  'jsonObject',
  'link',
  'linkMultiple',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** Options a plugin may add to every field (for example `isMultilang`). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface FieldAttributes {}

/** Options a plugin may add to every entity. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface EntityAttributes {}

export interface FieldDefinition extends FieldAttributes {
  type: FieldType;
  /** Must be present and non-empty on create; cannot be cleared. */
  required?: boolean;
  /** Unique among live (not deleted) records. Upsert looks records up by it. */
  unique?: boolean;
  /** Value used on create when the field is absent. */
  default?: unknown;
  /** varchar only; default 255. */
  maxLength?: number;
  /** int and float bounds. */
  min?: number;
  max?: number;
  /** Not writable through the public API. */
  readOnly?: boolean;
  /** Accepted on write, never returned (passwords). */
  writeOnly?: boolean;
  /**
   * Not stored: a present hook sets the value in every answer (a URL made from the public URL, a
   * state as of now). No column; read-only; `select` shows it, `where` and `sortBy` refuse it (400).
   */
  computed?: boolean;
  /** enum and multiEnum: the allowed values. */
  options?: readonly string[];
  /** link and linkMultiple: the target entity type. */
  entity?: string;
  /**
   * linkMultiple: the field on the target that points back. When it is a `link`, this is a
   * has-many (no join table); when it is a `linkMultiple` or absent, a join table holds the pairs.
   */
  foreign?: string;
  /** linkMultiple many-to-many: the join table name (both sides must agree). */
  relationName?: string;
  /** Link to ExtensibleEnumOption: the code of the list the options come from. */
  extensibleEnum?: string;
  /**
   * varchar and text: one value per language of the instance. Core only knows the option (its own
   * entities use it); `@entity-records/multilang` gives such fields their variants (`nameDeDE`).
   */
  isMultilang?: boolean;
  /**
   * varchar and text: filtered by text (`contains`, `startsWith`, `endsWith`, `like`). On
   * PostgreSQL schema sync gives the column a trigram index, so that such filters need not read
   * every row (terms of three characters or more; any `startsWith`). Every write updates it.
   */
  searchable?: boolean;
  /**
   * Another field of the entity whose field rights in roles hold for this one too: a role that
   * hides (`read: false`) or locks (`edit: false`) that field hides or locks this one as well,
   * whatever it says of this one. `@entity-records/multilang` sets it on each language variant
   * (`nameDeDE` follows `name`).
   */
  rightsFrom?: string;
  /** Shown in metadata and OpenAPI. */
  label?: string;
  description?: string;
}

export interface EntityDefinition extends EntityAttributes {
  /** PascalCase name: the path segment of its routes. */
  name: string;
  fields: Record<string, FieldDefinition>;
  /** Unique indexes over several fields, by name. Link fields are named by the link. */
  uniqueIndexes?: Record<string, readonly string[]>;
  /** Enables attributes (virtual fields) for this entity. */
  hasAttributes?: boolean;
  /**
   * Records are made by the server only (jobs): the OpenAPI document offers no create, and a
   * create by any client, admins included, is 403.
   */
  serverCreated?: boolean;
  /**
   * Records are written by the server only (webhook deliveries): besides `serverCreated`, no
   * client updates, deletes, restores or links one, admins included (403); the OpenAPI document
   * offers the reads only.
   */
  serverWritten?: boolean;
  /**
   * The server chooses every record's id (a `beforeCreate` hook may set it, else a UUIDv7): a
   * create or upsert item that sends one is 400 `CORE_READ_ONLY_FIELD`, and the OpenAPI create
   * body has no `id`. For ids that are secrets (a sharing's public link).
   */
  serverIds?: boolean;
  /** Database table name; default: the snake_case of the name. */
  table?: string;
  label?: string;
  description?: string;
  /**
   * Row rules: which records of this type the caller may read and write (a tenant's, say). Runs
   * once per request and entity type for every caller with a user (admins too; not for
   * `systemContext()`), and answers `true` (all), `false` (none) or `where` items, ANDed into
   * every read and write. See docs/guide/permissions.md#row-rules.
   */
  access?: (ctx: RequestContext) => RowRule | Promise<RowRule>;
  /**
   * Record hooks of this entity type, by the names plugins use (`RECORD_HOOKS`): each runs after
   * the plugins' hooks of the same name.
   */
  hooks?: EntityHooks;
}

/** What a row rule answers: every record (`true`), none (`false`), or those matching `where` items (ANDed). */
export type RowRule = boolean | WhereItem | readonly WhereItem[];

/** A definition's own record hooks, one per hook name. */
export type EntityHooks = { readonly [K in RecordHookName]?: RecordHook };

type ValueOf<TField extends FieldDefinition> = TField['type'] extends 'int' | 'float'
  ? number
  : TField['type'] extends 'bool'
    ? boolean
    : TField['type'] extends 'multiEnum'
      ? string[]
      : TField['type'] extends 'jsonObject'
        ? Record<string, unknown>
        : TField['type'] extends 'enum'
          ? TField['options'] extends readonly (infer TOption)[]
            ? TOption
            : string
          : string;

type PlainFields<TFields extends Record<string, FieldDefinition>> = {
  [K in keyof TFields as TFields[K]['type'] extends 'link' | 'linkMultiple'
    ? never
    : TFields[K]['writeOnly'] extends true
      ? never
      : K]: TFields[K]['required'] extends true ? ValueOf<TFields[K]> : ValueOf<TFields[K]> | null;
};
type LinkFields<TFields extends Record<string, FieldDefinition>> = {
  [K in keyof TFields as TFields[K]['type'] extends 'link' ? `${K & string}Id` : never]: string | null;
} & {
  [K in keyof TFields as TFields[K]['type'] extends 'link' ? `${K & string}Name` : never]?: string | null;
} & {
  [K in keyof TFields as TFields[K]['type'] extends 'linkMultiple' ? `${K & string}Ids` : never]: string[];
} & {
  [K in keyof TFields as TFields[K]['type'] extends 'linkMultiple'
    ? `${K & string}Names`
    : never]?: Record<string, string>;
};

/**
 * The fields every record has. A type, not an interface: record types must be assignable to
 * `ApiRecord` (`Record<string, unknown>`), which interfaces are not.
 */
export type SystemFields = {
  id: string;
  createdAt: string;
  modifiedAt: string;
  createdById: string | null;
  modifiedById: string | null;
  createdByName?: string | null;
  modifiedByName?: string | null;
};

export type RecordOf<$Definition extends EntityDefinition> = SystemFields &
  PlainFields<$Definition['fields']> &
  LinkFields<$Definition['fields']>;

/** Field options, as a definition's literal type shows them. */
type FieldsOf<$Definition extends EntityDefinition> = $Definition['fields'];
type IsTrue<TValue> = TValue extends true ? true : false;
type Stored<TField extends FieldDefinition> = IsTrue<TField['readOnly']> extends true ? false : IsTrue<TField['computed']> extends true ? false : true;
type PlainKeys<TFields extends Record<string, FieldDefinition>> = {
  [K in keyof TFields]: TFields[K]['type'] extends 'link' | 'linkMultiple' ? never : Stored<TFields[K]> extends true ? K : never;
}[keyof TFields];
/** Required on create: `required: true` without a `default`. */
type RequiredKeys<TFields extends Record<string, FieldDefinition>> = {
  [K in PlainKeys<TFields>]: IsTrue<TFields[K]['required']> extends true ? ('default' extends keyof TFields[K] ? never : K) : never;
}[PlainKeys<TFields>];
/** A link object of find-or-create: the target's fields that find (or make) the record. */
export type LinkObject = Record<string, unknown>;
type LinkInput<TFields extends Record<string, FieldDefinition>> = {
  [K in keyof TFields as TFields[K]['type'] extends 'link' ? (Stored<TFields[K]> extends true ? `${K & string}Id` : never) : never]?: string | null;
} & {
  [K in keyof TFields as TFields[K]['type'] extends 'link' ? (Stored<TFields[K]> extends true ? K : never) : never]?: LinkObject | null;
} & {
  [K in keyof TFields as TFields[K]['type'] extends 'linkMultiple' ? (Stored<TFields[K]> extends true ? `${K & string}Ids` : never) : never]?: string[];
} & {
  [K in keyof TFields as TFields[K]['type'] extends 'linkMultiple' ? (Stored<TFields[K]> extends true ? K : never) : never]?: LinkObject[];
};

/**
 * The body of a create: required fields (without a default) must be there; links by id
 * (`brandId`, `categoriesIds`) or as find-or-create objects (`brand`, `categories`); `id` optional.
 */
export type CreateBody<$Definition extends EntityDefinition> = { id?: string } & {
  [K in RequiredKeys<FieldsOf<$Definition>>]: ValueOf<FieldsOf<$Definition>[K]>;
} & {
  [K in Exclude<PlainKeys<FieldsOf<$Definition>>, RequiredKeys<FieldsOf<$Definition>>>]?: ValueOf<FieldsOf<$Definition>[K]> | null;
} & LinkInput<FieldsOf<$Definition>>;

/** The body of an update: any writable field; a required one cannot be cleared (no null). */
export type UpdateBody<$Definition extends EntityDefinition> = {
  [K in PlainKeys<FieldsOf<$Definition>>]?: IsTrue<FieldsOf<$Definition>[K]['required']> extends true
    ? ValueOf<FieldsOf<$Definition>[K]>
    : ValueOf<FieldsOf<$Definition>[K]> | null;
} & LinkInput<FieldsOf<$Definition>>;

/** Keys a literal has that its shape does not: each must be `never`, so a typo is a compile error naming it. */
type NoExtraKeys<TLiteral, TShape, TWhat extends string> = {
  [K in Exclude<keyof TLiteral, keyof TShape>]: `'${K & string}' is not ${TWhat}`;
};

/**
 * What `defineEntity` accepts: a definition without options core or a plugin (by declaration
 * merging on `FieldAttributes` / `EntityAttributes`) does not declare.
 */
export type StrictDefinition<$Definition extends EntityDefinition> = NoExtraKeys<$Definition, EntityDefinition, 'an entity option'> & {
  fields: { [K in keyof $Definition['fields']]: NoExtraKeys<$Definition['fields'][K], FieldDefinition, 'a field option'> };
} & ($Definition['hooks'] extends object ? { hooks?: NoExtraKeys<$Definition['hooks'], EntityHooks, 'a record hook'> } : unknown);

/** A definition carrying its record type. */
export type DefinedEntity<$Definition extends EntityDefinition> = $Definition & {
  readonly _type?: RecordOf<$Definition>;
};

/** The record type of a definition made with `defineEntity`. */
export type InferRecord<TEntity extends { _type?: unknown }> = NonNullable<TEntity['_type']>;

/** Any stored record as the API shows it. */
export type ApiRecord = Record<string, unknown> & { id: string };
