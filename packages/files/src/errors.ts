import { declareErrors, type ErrorTable } from '@entity-records/core';

/** The error codes of `@entity-records/files`, with their HTTP status (docs/reference/errors.md). */
export const FILES_ERRORS = declareErrors({
  FILES_NAME_INVALID: 400,
  FILES_CONTENT_REQUIRED: 400,
  FILES_CONTENT_INVALID: 400,
  FILES_URL_REFUSED: 400,
  FILES_URL_FETCH_FAILED: 400,
  FILES_NO_THUMBNAIL: 404,
  FILES_CHUNK_CONFLICT: 409,
  FILES_TOO_LARGE: 413,
  FILES_RANGE_NOT_SATISFIABLE: 416,
});

declare module '@entity-records/core' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds the codes by declaration merging
  interface ErrorCodes extends ErrorTable<typeof FILES_ERRORS> {}
}
