/**
 * The two path generations of the spec (CONTRACT §1). Both serve every route from the same
 * handlers; what differs between them is this table, and nothing else reads the generation's name.
 */

export type GenerationName = 'A' | 'B';

/** A route of one generation, with the name its OpenAPI operations take. */
export interface NamedPath {
  readonly path: string;
  readonly name: string;
}

export interface Generation {
  readonly name: GenerationName;
  /** Where its routes are mounted. */
  readonly base: '/api' | '/api/v1';
  /** Prefix of its OpenAPI operation ids (generation B's are `v1_…`). */
  readonly operationPrefix: string;
  /** A body with another content type than JSON is 415 (the spec says so for generation A). */
  readonly jsonOnly: boolean;
  /** The update verb the spec names; the other one works too. */
  readonly updateVerb: 'patch' | 'put';
  /** Sign-in and sign-out: `userSession`, and generation B's `App/user`. */
  readonly sessionPaths: readonly NamedPath[];
  /** The metadata document: `metadata`, and generation B's `Metadata`. */
  readonly metadataPaths: readonly NamedPath[];
  /** Upsert: `upsert`, and generation B's `MassActions/action/upsert`. */
  readonly upsertPaths: readonly NamedPath[];
  /** `GET /{Entity}/{id}/{link}` lists linked records (generation B; both have `entityRelation`). */
  readonly linkRoutes: boolean;
  readonly attributes: {
    /** An Attribute's `code` is required on create (else its id is its key). */
    readonly codeRequired: boolean;
    /** The endpoints and `__attributes` name attributes by code as well as by id. */
    readonly byCode: boolean;
    /** A link attribute's own key takes an object to find or create. */
    readonly linkObjects: boolean;
    /** `__attributesToRemove` removes attributes (in generation A it is an unknown key). */
    readonly removeKey: boolean;
    /** The instance option `v1AttributesFormat: 'nested'` shows attributes without `Flatten-Attributes`. */
    readonly nestedFormat: boolean;
  };
}

export const GENERATIONS: Readonly<Record<GenerationName, Generation>> = Object.freeze({
  A: {
    name: 'A',
    base: '/api',
    operationPrefix: '',
    jsonOnly: true,
    updateVerb: 'patch',
    sessionPaths: [{ path: '/userSession', name: '' }],
    metadataPaths: [{ path: '/metadata', name: '' }],
    upsertPaths: [{ path: '/upsert', name: 'upsert' }],
    linkRoutes: false,
    attributes: { codeRequired: true, byCode: true, linkObjects: true, removeKey: false, nestedFormat: false },
  },
  B: {
    name: 'B',
    base: '/api/v1',
    operationPrefix: 'v1_',
    jsonOnly: false,
    updateVerb: 'put',
    sessionPaths: [
      { path: '/userSession', name: '' },
      { path: '/App/user', name: 'AppUser' },
    ],
    metadataPaths: [
      { path: '/metadata', name: '' },
      { path: '/Metadata', name: 'Metadata' },
    ],
    upsertPaths: [
      { path: '/upsert', name: 'upsert' },
      { path: '/MassActions/action/upsert', name: 'massActionUpsert' },
    ],
    linkRoutes: true,
    attributes: { codeRequired: false, byCode: false, linkObjects: false, removeKey: true, nestedFormat: true },
  },
});

/**
 * The generation a request (or a job it started) came through. Work of the server itself has
 * none and follows generation B, whose rules ask least of attribute keys.
 */
export const generationOf = (ctx: { generation?: GenerationName }): Generation => GENERATIONS[ctx.generation ?? 'B'];
