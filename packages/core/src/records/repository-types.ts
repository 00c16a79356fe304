import type { UserAccess } from '../auth/access-control';
import type { RecordAttributes } from '../attributes/record-attributes';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { SchemaModel } from '../definition/normalize';
import type { HookRegistry, PresentKind } from '../hooks';
import type { PresentLink, Presenter } from '../present';
import type { Database, QueryBuilder } from '../sql/database';
import type { Repository } from './repository';

export interface FindParams {
  select?: readonly string[];
  where?: readonly unknown[];
  offset?: number;
  maxSize?: number;
  sortBy?: string;
  asc?: boolean;
  /** Only count. */
  totalOnly?: boolean;
  /** Only the page, without the count query. */
  collectionOnly?: boolean;
  /** Attributes (ids or codes) whose values the page shows; they may be sorted by. */
  attributes?: readonly string[];
  /** Every attribute each record has (with `Flatten-Attributes: true`). */
  allAttributes?: boolean;
}

export interface FindResult<TRecord = ApiRecord> {
  total?: number;
  list?: TRecord[];
}

export interface RestoreResult {
  restored: number;
  errors: { id: string; code: string; message: string }[];
}

/** What every repository of an instance shares. */
export interface RepositoryEnvironment {
  database: Database;
  schema: SchemaModel;
  hooks: HookRegistry;
  /** Largest `maxSize`; default 1000. */
  maxListSize: number;
  defaultListSize: number;
  /** Resolves a user's rights; a context without user is the system and unrestricted. */
  accessFor: (user: RequestContext['user']) => Promise<UserAccess>;
  /** The repository of another entity type (link targets). */
  repository: (entity: string) => Repository;
  /** Attribute values of records (entity types with `hasAttributes`). */
  attributes?: RecordAttributes;
  /** Plugin hooks and `_meta` categories that shape response pages. */
  presenter: Presenter;
}

/** How a page of records is read: for which response, and (linked records) through which link. */
export interface ListOptions {
  kind: PresentKind;
  scope?: LinkScope;
  link?: PresentLink;
  /** `findByIds`: any number of records, whatever `maxListSize` says. */
  unlimited?: boolean;
}

/** Work to run once the transaction that wrote the records has committed (after-hooks). */
export type AfterCommit = (() => Promise<void>)[];

/** Restricts a query of the target entity to the records linked to one source record. */
export type LinkScope = (qb: QueryBuilder) => void;
