import type { GenerationName } from './generations';
import type { UserAccess } from './auth/access-control';

/** Values plugins add to the request context, by declaration merging. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface RequestContextVariables {}

/** The user a request acts for. */
export interface ContextUser {
  id: string;
  userName: string;
  name: string | null;
  isAdmin: boolean;
  rolesIds: string[];
}

/** What a repository call knows about its caller. A context without user acts as the system. */
export interface RequestContext {
  user?: ContextUser;
  /** Path generation of the request: A (`/api/`) or B (`/api/v1/`). */
  generation?: GenerationName;
  variables: Partial<RequestContextVariables>;
  /** The user's rights, resolved once per request (by the token check, or on first use). */
  access?: UserAccess;
  /** In a delegated session: the admin acting for `user`. */
  actor?: ContextUser;
  /** `Flatten-Attributes: true`: attribute values read and write as virtual fields of the record. */
  flattenAttributes?: boolean;
  /**
   * The language the response is asked in (header `language`): a code of the instance's
   * languages (`main` resolved to the main code). Undefined when none was asked for.
   */
  language?: string;
  /**
   * A read made for a caller who sees its records through a link (the names of linked records in
   * a language, `_meta.options`), usually with `systemContext()`: the caller's rights, so that
   * present hooks show no field these rights do not let a link show
   * (`UserAccess.readsThroughLink`).
   */
  shownTo?: UserAccess;
  /** Whether the response carries `_meta` on every record (header `With-Meta: true` or `1`). */
  withMeta?: boolean;
  /** The request's id (its sane `X-Request-Id`, else a new one), as logs and the `X-Request-Id` answer header show it. */
  requestId?: string;
}

/** The context of trusted server-side work: no user, no permission checks. */
export const systemContext = (): RequestContext => ({ variables: {} });
