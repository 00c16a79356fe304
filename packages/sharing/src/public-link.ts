import type { ErrorRequestHandler, Request, RequestHandler, Response, Router } from 'express';
import { ApiError, headerText, MAX_JSON_DEPTH, nestsDeeper, nowDateTime, systemContext, toHandler, verifyPassword, type EntityApi } from '@entity-records/core';
import { readStored, requestedRange, sendContent, type ByteRange, type FileService } from '@entity-records/files';
import type { SharingStore, ShareState } from './sharing-store';

const FORM_LIMIT = 16 * 1024;

const notFound = (id: string) => new ApiError('CORE_NOT_FOUND', `Sharing '${id}' not found`, { details: { entity: 'Sharing', id } });

/**
 * `password` from a small urlencoded or JSON body (a browser form posting the password). Read
 * whenever a `POST` sends one, with or without a password to check: a body the API's routes
 * refuse (not JSON, nested deeper than they take) is refused here too (400).
 */
async function postedPassword(req: Request): Promise<string | undefined> {
  if (req.method !== 'POST') return undefined;
  const form = req.is('application/x-www-form-urlencoded');
  const json = req.is('application/json');
  if (!form && !json) return undefined;
  let text = '';
  for await (const chunk of req as AsyncIterable<Buffer>) {
    text += chunk.toString('utf8');
    if (text.length > FORM_LIMIT) throw new ApiError('CORE_PAYLOAD_TOO_LARGE', 'The form is larger than allowed');
  }
  if (form) return new URLSearchParams(text).get('password') ?? undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError('CORE_INVALID_JSON', 'The body is not valid JSON');
  }
  if (nestsDeeper(body, MAX_JSON_DEPTH)) {
    throw new ApiError('CORE_INVALID_JSON', `The body must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`, { details: { maxDepth: MAX_JSON_DEPTH } });
  }
  const value = (body as { password?: unknown } | null)?.password;
  return typeof value === 'string' ? value : undefined;
}

/** 404 (unknown, deleted, inactive, file gone), 410 (expired, used up), else the state. */
function assertUsable(state: ShareState | undefined, id: string): asserts state is ShareState & { file: NonNullable<ShareState['file']> } {
  if (!state || !state.live || !state.active || !state.file) throw notFound(id);
  if (state.validTill !== null && state.validTill <= nowDateTime()) throw new ApiError('SHARING_EXPIRED', `Sharing '${id}' expired at ${state.validTill}`);
  if (state.allowedUsage !== null && state.used >= state.allowedUsage) throw new ApiError('SHARING_USED_UP', `Sharing '${id}' has been used ${state.used} of ${state.allowedUsage} times`);
}

/** A sharing works only while the user who made it is active: deactivating a user stops their links. */
async function assertCreatorActive(instance: EntityApi, state: ShareState): Promise<void> {
  if (state.createdById === null) return;
  const found = await instance.repository('User').findByIds(systemContext(), [state.createdById], { select: ['isActive'] });
  if (found.get(state.createdById)?.isActive !== true) throw notFound(state.id);
}

/**
 * What every public answer carries: the link is a secret, so no page the file links to learns it
 * from the Referer; and a browser shows the file as the type it is labelled, never a guessed one.
 */
const PUBLIC_HEADERS = { 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' };
const publicHeaders: RequestHandler = (_req, res, next) => {
  res.set(PUBLIC_HEADERS);
  next();
};
/**
 * The same for a request the router refused before it got here (a query string it will not read,
 * the instance starting or closing): the error passes by on its way to the router's error answer.
 */
const publicHeadersOnError: ErrorRequestHandler = (error, _req, res, next) => {
  if (!res.headersSent) res.set(PUBLIC_HEADERS);
  next(error);
};

/** The password check, throttled like sign-ins (per sharing and per address, across processes). */
async function checkPassword(instance: EntityApi, req: Request, { state, posted }: { state: ShareState; posted?: string }): Promise<void> {
  if (!state.passwordHash) return;
  // The password was set in JSON (UTF-8): the header is read as UTF-8 too.
  const given = headerText(req, 'sharing-password') ?? posted;
  if (given === undefined || given === '') {
    throw new ApiError('SHARING_PASSWORD_REQUIRED', 'This link needs a password: send it in the Sharing-Password header or post it as the form field password');
  }
  const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  await instance.throttle.attempt(`sharing:${state.id}`, address, async () => {
    const cost = instance.options.auth?.passwordCost;
    if (!(await verifyPassword(given, state.passwordHash, cost))) throw new ApiError('CORE_UNAUTHORIZED', 'Wrong sharing password');
  });
}

/**
 * Whether a request counts as a use. `HEAD` never does. A byte range that starts past byte 0
 * continues a download (a player seeking, a resumed transfer) and is not counted, except on a link
 * with `allowedUsage`: nothing tells a continuation from a new download, so there every request
 * counts, or ranges would get round the limit.
 */
function countsAsUse(req: Request, state: ShareState, range: ByteRange | undefined): boolean {
  if (req.method === 'HEAD') return false;
  return !range || range.start === 0 || state.allowedUsage !== null;
}

/**
 * `GET /sharings/{id}.{ext}` downloads the shared file without a token (`?view=1` shows it
 * inline), whole or one byte range; `POST` the same with a form field `password` for protected
 * links. See `countsAsUse` for what counts as a use.
 */
export function publicLinkRoutes(parts: { store: SharingStore; files: FileService; instance: () => EntityApi }) {
  const serve = toHandler(async (req: Request, res: Response) => {
    const posted = await postedPassword(req);
    const id = String(req.params.file).split('.')[0];
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw notFound(id);
    const state = await parts.store.state(id);
    assertUsable(state, id);
    await assertCreatorActive(parts.instance(), state);
    await checkPassword(parts.instance(), req, { state, posted });
    const { file } = state;
    const etag = `"${file.hash}"`;
    const range = file.size === null ? undefined : requestedRange(res, file.size, etag);
    // Opened before a use is counted: contents missing from storage (404) use nothing up.
    const stream = await readStored({ storage: parts.files.storage, key: file.storageKey }, range);
    try {
      if (countsAsUse(req, state, range) && !(await parts.store.use(id))) {
        // Another download took the last use (or the sharing changed) meanwhile.
        assertUsable(await parts.store.state(id), id);
        throw new ApiError('SHARING_USED_UP', `Sharing '${id}' has been used up`);
      }
    } catch (error) {
      stream.destroy(); // never sent: close the stored file now
      throw error;
    }
    const inline = req.query.view === '1' || req.query.view === 'true';
    await sendContent(res, {
      stream,
      name: file.name,
      mimeType: file.mimeType,
      size: file.size ?? undefined,
      etag,
      range,
      disposition: inline ? 'inline' : 'attachment',
      cache: 'no-store',
    });
  });
  return (router: Router) => {
    router.use('/sharings', publicHeaders, publicHeadersOnError);
    router.get('/sharings/:file', serve);
    router.post('/sharings/:file', serve);
  };
}
