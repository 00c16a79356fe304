import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import request from 'supertest';
import { createPim, type Pim } from '../../examples/pim/src/app';
import { readConfig } from '../../examples/pim/src/config';

// Every operation the OpenAPI document of the example offers exists and serves someone: sent by an
// admin, with made-up ids and an empty body, it may be refused (400, 404 for a record that does not
// exist, 409…), but never answered as a route that does not exist (404 CORE_ROUTE_NOT_FOUND, 405)
// nor as forbidden to the admin (403: an operation nobody may use).
jest.setTimeout(120_000);
const ADMIN = { userName: 'admin', password: 'documented-ops-pass' };

type Operation = { parameters?: { in: string; name: string; required?: boolean }[]; requestBody?: unknown; responses?: Record<string, { content?: object }> };

const streams = (operation: Operation) => Object.keys(operation.responses?.['200']?.content ?? {}).includes('text/event-stream');

describe('the documented operations of the example', () => {
  let pim: Pim;
  let storage: string;
  let token: string;
  const signIn = async () =>
    (await request(pim.app).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken as string;

  beforeAll(async () => {
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'er-ops-'));
    pim = await createPim({ ...readConfig({ LOG_LEVEL: 'silent' }), databaseUrl: 'sqlite::memory:', storageDir: storage, adminPassword: ADMIN.password, demoData: false });
    token = await signIn();
  });
  afterAll(async () => {
    await pim.api.close();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  it('answer an admin with something else than "no such route"', async () => {
    const doc = (await request(pim.app).get('/apidocs/openapi.json').expect(200)).body as { paths: Record<string, Record<string, Operation>> };
    const missing: string[] = [];
    let sent = 0;
    for (const [template, item] of Object.entries(doc.paths)) {
      const url = template.replace(/\{[^}]+\}/g, 'no-such-thing');
      for (const [method, operation] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        // Signing out ends the token it is sent with: it gets one of its own.
        const signsOut = method === 'delete' && /\/(userSession|App\/user)$/.test(template);
        let req = request(pim.app)[method as 'get'](url).set('Authorization-Token', signsOut ? await signIn() : token).set('X-Requested-With', 'XMLHttpRequest');
        for (const p of operation.parameters ?? []) if (p.in === 'header' && p.required) req = req.set(p.name, 'x');
        if (operation.requestBody) req = req.send({});
        // An event stream never ends: its status and first bytes are all there is to see.
        if (streams(operation)) req = req.buffer(false).parse((res, done) => {
          const stream = res as unknown as Readable;
          stream.once('data', () => (stream.destroy(), done(null, {})));
        });
        const res = await req;
        sent += 1;
        // A 404 of a record or a thumbnail that does not exist names its own code.
        const noRoute = res.status === 405 || res.status === 403 || (res.status === 404 && (!res.body?.error?.code || res.body.error.code === 'CORE_ROUTE_NOT_FOUND'));
        if (noRoute) missing.push(`${method.toUpperCase()} ${template}: ${res.status} ${JSON.stringify(res.body)}`);
        // Signing in takes credentials, not a token; every other operation must have seen the admin.
        if (res.status === 401 && !/\/(userSession|App\/user)(\/cookie)?$/.test(template)) missing.push(`${method.toUpperCase()} ${template}: 401 for the admin`);
      }
    }
    expect(sent).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });

  it('offer no create of records only the server makes (jobs), which is 403 for admins too', async () => {
    const doc = (await request(pim.app).get('/apidocs/openapi.json').expect(200)).body as { paths: Record<string, Record<string, Operation>> };
    for (const base of ['/api', '/api/v1']) expect(Object.keys(doc.paths[`${base}/Job`])).toEqual(['get']);
    const res = await request(pim.app).post('/api/Job').set('Authorization-Token', token).send({ type: 'x' }).expect(403);
    expect(res.body.error.message).toBe('Job records are made by the server, not created through the API');
    await request(pim.app).post('/api/upsert').set('Authorization-Token', token).send([{ entity: 'Job', payload: { type: 'x' } }]).expect(200, [
      { status: 'Failed', stored: false, message: 'Job records are made by the server, not created through the API' },
    ]);
  });
});
