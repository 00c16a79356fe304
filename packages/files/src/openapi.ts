import { errorResponses, idempotentOperation, jsonContent as json, parameterRef, responseRef, schemaRef as ref, type OpenApiFragment } from '@entity-records/core';

const errors = errorResponses();
const uploadErrors = { ...errors, '409': responseRef('Conflict'), '413': responseRef('PayloadTooLarge'), '415': responseRef('UnsupportedMediaType') };

const name = { type: 'string', maxLength: 255, description: 'File name with its extension; no `/`, `\\`, `..`, NUL, CR or LF.' };
const id = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' };

/** A JSON upload: a name, an optional id, and the contents in `field`. */
const upload = (field: string, schema: Record<string, unknown>) => ({
  type: 'object',
  required: ['name', field],
  properties: { id: { ...id, description: 'Optional; made when absent.' }, name, [field]: schema },
});

const schemas = {
  FileBase64Upload: upload('fileContents', { type: 'string', pattern: '^data:[^,]*;base64,', description: '`data:<mimeType>;base64,<data>`; the mime type is recorded.' }),
  FileUrlUpload: upload('url', { type: 'string', format: 'uri', description: 'A public http or https URL; private and loopback addresses are refused, at most 3 redirects.' }),
  FileChunk: {
    type: 'object',
    required: ['id', 'name', 'fileUniqueHash', 'start', 'piece', 'piecesCount'],
    description:
      'One chunk of a file. Every chunk of a file carries the same `id`, `name`, `fileUniqueHash` and `piecesCount`; chunks may come in any order and at once.',
    properties: {
      id: { ...id, description: 'The id of the File to create; the same for every chunk.' },
      name,
      fileUniqueHash: { type: 'string', maxLength: 255, description: 'Names the upload; unique per whole file, distinct from `id`.' },
      start: { type: 'integer', minimum: 0, description: 'Byte offset of the chunk in the file (a JSON number; a string is 400).' },
      piece: { type: 'string', pattern: '^data:[^,]*;base64,', description: '`data:application/octet-stream;base64,<data>`.' },
      piecesCount: { type: 'integer', minimum: 1, description: 'How many chunks the file has (a JSON number; a string is 400).' },
    },
  },
  FileChunkAnswer: {
    type: 'object',
    required: ['chunks'],
    description: '`id` and `name` appear once every chunk is in and the File exists.',
    properties: {
      chunks: { type: 'array', items: { type: 'string' }, description: 'Start offsets received so far, sorted.' },
      id: { type: 'string' },
      name: { type: 'string' },
    },
  },
  FileMultipartUpload: {
    type: 'object',
    required: ['file'],
    properties: {
      file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The file.' },
      name: { ...name, description: 'Overrides the file name of the part.' },
      id: { ...id, description: 'Optional; made when absent.' },
    },
  },
};

const idParam = parameterRef('id');

/** Single byte ranges of a download (RFC 9110): a part of the contents, 206, or 416 past the end. */
export const rangeParameters = [
  { name: 'Range', in: 'header', required: false, schema: { type: 'string', pattern: '^bytes=' }, description: 'One range, `bytes=<first>-<last>`, `bytes=<first>-` or `bytes=-<suffix length>`; several ranges get the whole contents.' },
  { name: 'If-Range', in: 'header', required: false, schema: { type: 'string' }, description: 'The ETag of the contents the range is of; another one gets the whole contents.' },
];
export const rangeResponses = {
  '206': {
    description: 'The range asked for, with `Content-Range: bytes <first>-<last>/<size>`',
    content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
  },
  '416': { ...responseRef('Error'), description: 'The range starts past the end (FILES_RANGE_NOT_SATISFIABLE); `Content-Range: bytes */<size>`' },
};

/** The file routes in both generations. */
export const filesOpenApi: OpenApiFragment = {
  tags: [{ name: 'File', description: 'Upload files by base64, URL, chunks or multipart; download them and their thumbnails.' }],
  components: { schemas },
  paths: {
    '/File': {
      post: idempotentOperation({
        operationId: 'createFile',
        tags: ['File'],
        summary: 'Upload a file: base64 contents, a URL to fetch, or one chunk',
        description:
          'A body with `fileContents` or `url` creates the File and answers it. A body with `piece` and `fileUniqueHash` is one chunk: the answer lists the chunks received, and once all are in also `id` and `name` of the File. A chunk overlapping another, or naming another `id`, `name` or `piecesCount` than the first chunk of its `fileUniqueHash`, is 409.',
        requestBody: { required: true, ...json({ oneOf: [ref('FileBase64Upload'), ref('FileUrlUpload'), ref('FileChunk')] }) },
        responses: { '200': { description: 'The created File, or the state of a chunked upload', ...json({
          // A chunk answer always carries `chunks`, a File never: the two are told apart by it.
          oneOf: [{ allOf: [ref('File')], not: { required: ['chunks'], properties: { chunks: { type: 'array', items: { type: 'string' } } } } }, ref('FileChunkAnswer')],
        }) }, ...uploadErrors },
      }),
    },
    '/File/createChunk': {
      post: idempotentOperation({
        operationId: 'createFileChunk',
        tags: ['File'],
        summary: 'Upload one chunk of a file',
        requestBody: { required: true, ...json(ref('FileChunk')) },
        responses: { '200': { description: 'Chunks received; with `id` and `name` once the file is complete', ...json(ref('FileChunkAnswer')) }, ...uploadErrors },
      }),
    },
    '/File/upload': {
      post: idempotentOperation({
        operationId: 'uploadFile',
        tags: ['File'],
        summary: 'Upload a file as multipart/form-data (field `file`)',
        description: 'The one route that takes a body other than JSON. With `Idempotency-Key`, a repeat is the same request when its parts are: the plain fields, and the file\'s name, type, size and SHA-256.',
        requestBody: { required: true, content: { 'multipart/form-data': { schema: ref('FileMultipartUpload') } } },
        responses: { '200': { description: 'The created File', ...json(ref('File')) }, ...uploadErrors },
      }),
    },
    '/File/{id}/download': {
      get: {
        operationId: 'downloadFile',
        tags: ['File'],
        summary: 'The contents of a file, as an attachment, whole or one byte range',
        parameters: [
          idParam,
          ...rangeParameters,
          { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'The `ETag` of contents the client holds: 304 without a body while the file still has them.' },
        ],
        responses: {
          '200': {
            description: 'The contents, with the recorded Content-Type, a Content-Disposition naming the file, `ETag` (the SHA-256) and `Accept-Ranges: bytes`',
            content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
          },
          '304': { description: 'The file still has the contents If-None-Match names (no body)', headers: { ETag: { description: 'The SHA-256 of the contents', schema: { type: 'string' } } } },
          ...rangeResponses,
          ...errors,
        },
      },
    },
    '/File/{id}/thumbnail/{size}': {
      get: {
        operationId: 'getFileThumbnail',
        tags: ['File'],
        summary: 'A PNG thumbnail of an image file (made on first request)',
        parameters: [idParam, { name: 'size', in: 'path', required: true, schema: { type: 'string', enum: ['small', 'medium', 'large'] }, description: '128, 256 or 1024 px on the longer side.' }],
        responses: { '200': { description: 'The thumbnail', content: { 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } } }, ...errors },
      },
    },
  },
};
