import { declareErrors, type ErrorTable } from '@entity-records/core';

/** The error codes of `@entity-records/sharing`, with their HTTP status (docs/reference/errors.md). */
export const SHARING_ERRORS = declareErrors({
  SHARING_PASSWORD_REQUIRED: 401,
  SHARING_EXPIRED: 410,
  SHARING_USED_UP: 410,
});

declare module '@entity-records/core' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds the codes by declaration merging
  interface ErrorCodes extends ErrorTable<typeof SHARING_ERRORS> {}
}
