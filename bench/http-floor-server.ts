/**
 * The server of http-floor.ts: one answer (a record's JSON, 350 bytes, with an ETag) sent by the
 * HTTP layer named in BENCH_HTTP_LAYER, with no database and no work of ours. What each layer
 * costs per request is the part of our server's CPU that no code of ours can remove.
 */
import http from 'node:http';
import express, { type RequestHandler } from 'express';
import { createHttpServer } from '@entity-records/core';
import { QueryCapture, serveHttpToBench } from './child-ipc';

const RECORD = {
  id: '01a21a9a-09e2-70f4-9363-6bc4b49c4dd0',
  name: 'Product name',
  sku: 'SKU-1',
  price: 12.5,
  quantity: 3,
  isActive: true,
  brandId: '01a21a99-80a6-72b1-b5b8-2285c38ca8e2',
  brandName: 'Brand name',
  createdAt: '2026-11-27 01:23:19',
  modifiedAt: '2026-11-27 01:23:19',
  createdById: '01a21a99-80a6-72b1-b5b8-2285c38ca8e2',
  createdByName: 'Administrator',
};

/** The answer written by hand: what a bare server sends. */
const writeRecord: RequestHandler = (_req, res) => {
  const body = JSON.stringify(RECORD);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), etag: '"1"' });
  res.end(body);
};

/** The answer through Express's response (`res.json`), as our routes send it. */
const jsonRecord: RequestHandler = (_req, res) => {
  res.setHeader('ETag', '"1"');
  res.json(RECORD);
};

/** An Express app without its ETag hashing (our record answers carry their own) or `X-Powered-By`. */
function app(): express.Express {
  const a = express();
  a.disable('x-powered-by');
  a.set('etag', false);
  return a;
}

/**
 * Express with routing shaped like ours for `GET /api/{Entity}/{id}`: a router at `/api`, 12
 * middlewares every request passes (request id, traffic, query, ready, generation, body,
 * token, options, …), 40 routes tried before the record's.
 */
function routedLikeOurs(): express.Express {
  const router = express.Router();
  for (let i = 0; i < 12; i++) router.use((_req, _res, next) => next());
  for (let i = 0; i < 40; i++) router.get(`/route${i}/:id`, jsonRecord);
  router.get('/:entity/:id', jsonRecord);
  return app().use('/api', router);
}

const LAYERS: Record<string, () => http.RequestListener> = {
  'node:http': () => writeRecord as unknown as http.RequestListener,
  // Bare node:http, but each request and response gets another prototype as Express gives them.
  'node:http, prototypes swapped': () => (req, res) => {
    Object.setPrototypeOf(req, express.request);
    Object.setPrototypeOf(res, express.response);
    (writeRecord as unknown as http.RequestListener)(req, res);
  },
  'express, the answer written by hand': () => app().use(writeRecord),
  'express, res.json': () => app().use(jsonRecord),
  'express, routed like ours': routedLikeOurs,
  'express routed like ours, born with its prototypes': routedLikeOurs,
};

/** Express apps run by a server whose requests and responses are born with the app's prototypes. */
const BORN = new Set(['express routed like ours, born with its prototypes']);

const name = process.env.BENCH_HTTP_LAYER ?? '';
const layer = LAYERS[name];
if (!layer) throw new Error(`BENCH_HTTP_LAYER must be one of: ${Object.keys(LAYERS).join(', ')}`);
const listener = layer();
const server = BORN.has(name) ? createHttpServer(listener as express.Express) : http.createServer(listener);
void serveHttpToBench(server, new QueryCapture(), async () => undefined);
