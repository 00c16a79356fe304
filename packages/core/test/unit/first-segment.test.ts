import express, { type Router } from 'express';
import request from 'supertest';
import { dispatchByFirstSegment } from '../../src/http/first-segment';

/** A router with every kind of layer; each answers with its own name and what it matched. */
function routes(): Router {
  const router = express.Router();
  const answer = (name: string) => (req: express.Request, res: express.Response) => {
    res.json({ name, params: req.params, url: req.url });
  };
  router.use((req, res, next) => {
    res.setHeader('X-Seen', `${res.getHeader('X-Seen') ?? ''}all,`);
    next();
  });
  router.get('/', answer('root'));
  router.get('/Job/:id', answer('job'));
  router.use('/upsert', (req, res, next) => (req.method === 'DELETE' ? answer('upsert use')(req, res) : next()));
  router.post('/upsert', answer('upsert'));
  router.get('/entityStream.json', answer('stream json'));
  router.get(/^\/regex-(\d+)$/, answer('regex'));
  router.get(['/listed', '/also-listed/:id'], answer('list'));
  router.get('/:entity', answer('list of entity'));
  router.get('/:entity/:id', answer('record'));
  router.get('/{:entity}/optional/:id', answer('optional'));
  router.get('/Job/:id/log', answer('job log, after the record routes'));
  router.get('/files/*rest', answer('splat'));
  router.patch('/:entity/:id', answer('patch'));
  router.use((req, res) => {
    res.status(404).json({ name: 'not found', url: req.url });
  });
  return router;
}

const PATHS = [
  ['GET', '/'],
  ['GET', '/Job/7'],
  ['GET', '/job/7'],
  ['GET', '/JOB/7/'],
  ['GET', '/Job/7/log'],
  ['GET', '/Job/7/other'],
  ['GET', '/Job'],
  ['POST', '/upsert'],
  ['POST', '/UPSERT/'],
  ['DELETE', '/upsert/x'],
  ['GET', '/upsert'],
  ['GET', '/upsertion'],
  ['GET', '/entityStream.json'],
  ['GET', '/entityStreamXjson'],
  ['GET', '/regex-12'],
  ['GET', '/listed'],
  ['GET', '/also-listed/3'],
  ['GET', '/Product'],
  ['GET', '/Product/1?select=name'],
  ['GET', '/Pr%6Fduct/1'],
  ['GET', '/Prodüct/1'],
  ['GET', '/optional/5'],
  ['GET', '/Brand/optional/5'],
  ['GET', '/files/a/b/c'],
  ['PATCH', '/Product/1'],
  ['PUT', '/Product/1'],
  ['OPTIONS', '/Product/1'],
  ['OPTIONS', '/Job/1'],
  ['HEAD', '/Job/1'],
  ['GET', '/a/b/c/d'],
] as const;

async function answers(app: express.Express): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [method, path] of PATHS) {
    const res = await request(app)[method.toLowerCase() as 'get'](`/api${path}`);
    out.push({ method, path, status: res.status, body: res.body, seen: res.headers['x-seen'], allow: res.headers.allow });
  }
  return out;
}

describe('dispatchByFirstSegment', () => {
  it("answers every request as the router itself does: order, case, escapes, methods, OPTIONS, 404", async () => {
    const router = routes();
    const plain = await answers(express().use('/api', router));
    const dispatched = await answers(express().use('/api', dispatchByFirstSegment(router)));
    expect(dispatched).toEqual(plain);
    // The cases above do reach different layers.
    expect(new Set(plain.map((a) => JSON.stringify((a as { body: { name?: string } }).body?.name))).size).toBeGreaterThan(12);
  });

  it('does not try the layers of other first segments', async () => {
    const router = routes();
    const tried: string[] = [];
    for (const layer of (router as unknown as { stack: { route?: { path?: unknown }; match(path: string): unknown }[] }).stack) {
      const match = layer.match.bind(layer);
      layer.match = (path: string) => {
        tried.push(String(layer.route?.path ?? 'use'));
        return match(path);
      };
    }
    const app = express().use('/api', dispatchByFirstSegment(router));
    expect((await request(app).get('/api/Product/1')).body.name).toBe('record');
    // A RegExp or a list of paths may match any first segment: they are tried as before.
    expect(tried).toEqual(['use', String(/^\/regex-(\d+)$/), '/listed,/also-listed/:id', '/:entity', '/:entity/:id']);
  });
});
