import type { ApiRecord } from '../declarations';
import { ApiError } from '../errors';

/**
 * A record's version (CONTRACT §16): 1 when created, one more with every write. It travels with a
 * record read once, under a symbol (never part of its JSON), for the `ETag` of the answer.
 */
const VERSION = Symbol.for('@entity-records/core/version');

export function withRecordVersion<TRecord extends ApiRecord>(record: TRecord, version: number): TRecord {
  Object.defineProperty(record, VERSION, { value: version, enumerable: false });
  return record;
}

/** The version a record was read at, if it was read with one. */
export const versionOf = (record: object): number | undefined => (record as { [VERSION]?: number })[VERSION];

/** The strong `ETag` of a version. */
export const etagOf = (version: number): string => `"${version}"`;

/**
 * Whether a list of entity tags (`"3"`, `"3", "4"`, `*`) names this version: `If-Match` compares
 * strongly (a weak `W/"3"` never matches), `If-None-Match` weakly (RFC 9110).
 */
export function matchesVersion(header: string, { version, weak }: { version: number; weak: boolean }): boolean {
  const tag = etagOf(version);
  return header.split(',').some((item) => {
    const t = item.trim();
    return t === '*' || t === tag || (weak && t === `W/${tag}`);
  });
}

/** 412: the record is no longer at the version the client names (`If-Match`); nothing was written. */
export const preconditionFailed = (entity: string, id: string): ApiError =>
  new ApiError('CORE_PRECONDITION_FAILED', `${entity} '${id}' has changed since the version given in If-Match; read it again`, { details: { entity, id } });

/** 412: the record is at a version the client names in `If-None-Match` (or `*`: it exists); nothing was written. */
export const stillMatches = (entity: string, id: string): ApiError =>
  new ApiError('CORE_PRECONDITION_FAILED', `${entity} '${id}' is at a version given in If-None-Match; nothing was written`, { details: { entity, id } });
