import { bodyResponses, errorResponses, responseRef } from './error-responses';
import { jsonBody, ok, ref, type Generation, type OperationId, type PathItem } from './refs';

export const SESSION = {
  type: 'object',
  required: ['authorizationToken'],
  properties: {
    authorizationToken: { type: 'string' },
    user: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        userName: { type: 'string' },
        name: { type: ['string', 'null'] },
        isAdmin: { type: 'boolean' },
        rolesIds: { type: 'array', items: { type: 'string' } },
      },
    },
    actor: {
      type: 'object',
      description: 'In a delegated session: the admin acting for `user`.',
      properties: { id: { type: 'string' }, userName: { type: 'string' }, name: { type: ['string', 'null'] } },
    },
    acl: { type: 'object', description: 'Per entity type: `{create, read, edit, delete, stream}`.' },
  },
};

/** The cookie sign-in answers the session without the token (the cookie carries it). */
export const COOKIE_SESSION = {
  type: 'object',
  required: ['user', 'acl'],
  properties: { user: SESSION.properties.user, actor: SESSION.properties.actor, acl: SESSION.properties.acl },
};

/** The token times a sign-in may ask for instead of the instance's: hours from 0 (no limit) to 100 years. */
const hoursHeader = (name: string) => ({
  name,
  in: 'header',
  schema: { type: 'number', minimum: 0, maximum: 876_000 },
  description: 'Hours, instead of the instance default; 0 = no limit; at most 876000 (else 400).',
});
const TOKEN_TIMES = [hoursHeader('Authorization-Token-Lifetime'), hoursHeader('Authorization-Token-Idletime')];

/** A sign-in also fails with 429 after too many failures. */
const signInResponses = () => ({ ...errorResponses(), '429': responseRef('TooManyRequests') });

/** Token sessions: sign in with Basic credentials, read the session, revoke the token. */
export function sessionPath(op: OperationId, suffix: string): PathItem {
  return {
    get: {
      operationId: op(`signIn${suffix}`),
      tags: ['Auth'],
      summary: 'Obtain a token with Basic credentials (or read the session of a token)',
      security: [{ basicAuth: [] }, { tokenAuth: [] }],
      parameters: [
        { name: 'Authorization-Token-Only', in: 'header', schema: { type: 'string', enum: ['true'] }, description: 'Answer `{authorizationToken}` only.' },
        ...TOKEN_TIMES,
        { name: 'Authorization-Delegate', in: 'header', schema: { type: 'string' }, description: 'Admins only: the user name of the user the new token acts for.' },
      ],
      responses: { '200': ok('The token (and the user with its rights)', ref('Session')), ...signInResponses() },
    },
    delete: {
      operationId: op(`signOut${suffix}`),
      tags: ['Auth'],
      summary: 'Revoke the token presented',
      description: 'By the session cookie alone, only with the header `X-Requested-With: XMLHttpRequest` (else 403).',
      responses: {
        '200': ok('Revoked', { type: 'boolean', const: true }),
        '401': responseRef('Unauthorized'),
        '403': { ...responseRef('Forbidden'), description: 'The cookie alone, without X-Requested-With' },
        default: responseRef('Error'),
      },
    },
  };
}

/** Browser sessions: an HttpOnly cookie instead of a token header. */
export function cookiePath(op: OperationId, suffix: string, generation: Generation): PathItem {
  const credentials = { type: 'object', required: ['userName', 'password'], properties: { userName: { type: 'string' }, password: { type: 'string' } } };
  return {
    post: {
      operationId: op(`signInCookie${suffix}`),
      tags: ['Auth'],
      summary: 'Sign in and receive the session cookie (HttpOnly, SameSite=Lax)',
      security: [],
      parameters: [...TOKEN_TIMES, { name: 'Authorization-Delegate', in: 'header', schema: { type: 'string' }, description: 'Admins only: the user name of the user the session acts for.' }],
      requestBody: jsonBody(credentials),
      responses: {
        '200': {
          ...ok('The user with its rights; the cookie is set', ref('CookieSession')),
          headers: { 'Set-Cookie': { description: 'The session cookie `er_session`.', schema: { type: 'string' } } },
        },
        ...signInResponses(),
        // JSON only in both generations (a cross-site form could send another type).
        ...bodyResponses({ ...generation, jsonOnly: true }),
      },
    },
    delete: {
      operationId: op(`signOutCookie${suffix}`),
      tags: ['Auth'],
      summary: 'Revoke the session of the cookie and clear it',
      description: 'Needs the header `X-Requested-With: XMLHttpRequest` when a cookie is sent (else 403).',
      security: [],
      responses: {
        '200': ok('Signed out', { type: 'boolean', const: true }),
        '403': { ...responseRef('Forbidden'), description: 'A cookie without X-Requested-With' },
        default: responseRef('Error'),
      },
    },
  };
}
