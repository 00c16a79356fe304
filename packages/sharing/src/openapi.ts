import { errorResponses, idempotentOperation, jsonContent, responseRef, schemaRef, type OpenApiFragment } from '@entity-records/core';
import { rangeParameters, rangeResponses } from '@entity-records/files';

const fileParam = {
  name: 'file',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}(\\.[A-Za-z0-9]+)?$' },
  description: '`{id}.{ext}`: the sharing id and the extension of the file name.',
};
const viewParam = { name: 'view', in: 'query', required: false, schema: { type: 'string', enum: ['1'] }, description: '`1` shows the file inline instead of as an attachment.' };
const passwordHeader = { name: 'Sharing-Password', in: 'header', required: false, schema: { type: 'string' }, description: 'The password of a protected link.' };

const responses = {
  '200': { description: 'The file (counts one use)', content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
  ...rangeResponses,
  '206': { ...rangeResponses['206'], description: `${rangeResponses['206'].description}. Counts one use when it starts at byte 0, or on a link with allowedUsage.` },
  '401': { ...responseRef('Unauthorized'), description: 'Password missing (SHARING_PASSWORD_REQUIRED) or wrong (CORE_UNAUTHORIZED)' },
  '404': responseRef('NotFound'),
  '410': { ...responseRef('Error'), description: 'Expired (SHARING_EXPIRED) or used up (SHARING_USED_UP)' },
  '429': { ...responseRef('TooManyRequests'), description: 'Too many wrong passwords; see Retry-After' },
  default: responseRef('Error'),
};

/** POST /Sharing in both generations, and the public link at the root. */
export const sharingOpenApi: OpenApiFragment = {
  tags: [{ name: 'Sharing', description: 'Public links to files, optionally limited in time, in uses and by a password.' }],
  paths: {
    '/Sharing': {
      // Served by core's create route, which honours Idempotency-Key.
      post: idempotentOperation({
        operationId: 'createSharing',
        tags: ['Sharing'],
        summary: 'Share a file: {fileId, name?} plus optional validTill, allowedUsage, password',
        description: 'The caller must be able to read the file. The answer carries `link`, `viewLink` and `filePathsData`; `active` and `available` are true and `deleted` false.',
        requestBody: { required: true, ...jsonContent(schemaRef('SharingCreate')) },
        responses: {
          '200': { description: 'The Sharing', ...jsonContent(schemaRef('Sharing')) },
          ...errorResponses(),
          '413': responseRef('PayloadTooLarge'),
          '415': responseRef('UnsupportedMediaType'),
        },
      }),
    },
  },
  rootPaths: {
    '/sharings/{file}': {
      get: {
        operationId: 'downloadSharing',
        tags: ['Sharing'],
        summary: 'Download a shared file (no token)',
        security: [],
        parameters: [fileParam, viewParam, passwordHeader, ...rangeParameters],
        responses,
      },
      post: {
        operationId: 'downloadSharingWithPassword',
        tags: ['Sharing'],
        summary: 'Download a protected shared file, the password posted as a form (no token)',
        security: [],
        parameters: [fileParam, viewParam, ...rangeParameters],
        requestBody: {
          content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { password: { type: 'string' } } } } },
        },
        responses,
      },
    },
  },
};
