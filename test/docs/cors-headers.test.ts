import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEntityApi } from '@entity-records/core';
import { readConfig } from '../../examples/pim/src/config';
import { pimOptions } from '../../examples/pim/src/options';
import { ROOT } from '../support/child-server';
import { samplesOf } from './samples';

// The CORS section of docs/guide/embedding.md lists the request headers a browser client must be
// allowed to send and the response headers it must be allowed to read. Both lists are checked
// against what the packages' sources read and set, and what the OpenAPI document of an instance
// with every package declares, in both directions: nothing missing, nothing stale.

const GUIDE = path.join(ROOT, 'docs/guide/embedding.md');

/** Sent by the browser itself: a script cannot set them, so they are never allowed. */
const SENT_BY_THE_BROWSER = ['cookie', 'content-length', 'transfer-encoding', 'host'];
/** Read for the body parsers (express.json checks it), not by a `req.get`. */
const READ_BY_PARSERS = ['content-type'];
/** Readable by scripts without being exposed (CORS-safelisted response headers). */
const SAFELISTED = ['cache-control', 'content-language', 'content-length', 'content-type', 'expires', 'last-modified', 'pragma'];
/** Answered for the browser, proxies or the connection, not for scripts (Set-Cookie can never be exposed). */
const NOT_FOR_SCRIPTS = ['set-cookie', 'connection', 'x-accel-buffering', 'x-content-type-options', 'content-security-policy', 'referrer-policy'];

/** Every TypeScript source of the packages (not their OpenAPI descriptions, which are read from the document). */
function sources(): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
  return fs.readdirSync(path.join(ROOT, 'packages')).flatMap((p) => {
    const src = path.join(ROOT, 'packages', p, 'src');
    return fs.existsSync(src) ? walk(src).map((f) => fs.readFileSync(f, 'utf8')) : [];
  });
}

/** The first groups of every match of the patterns, lower case. */
const matches = (texts: string[], patterns: RegExp[]) =>
  new Set(texts.flatMap((text) => patterns.flatMap((p) => [...text.matchAll(p)].map((m) => m[1].toLowerCase()))));

/** Request headers the sources read: `req.get('x')`, `req.headers['x']`, a helper given `(req, 'x')`, the headers of a body parser's check. */
const READS = [/req\.(?:get|header)\(\s*'([\w-]+)'/g, /(?<!res\.)headers\[\s*'([\w-]+)'\s*\]/g, /req\.headers\.(\w+)/g, /\(req,\s*'([\w-]+)'\)/g];
/** Response headers the sources set: `setHeader`, `res.set`, `append`, `res.type` (Content-Type). */
const KEY = `'([A-Za-z][\\w-]*)'\\s*:|\\b([A-Z]\\w*)\\s*:`;
const SETS = [/(?:setHeader|append|res\.set)\(\s*'([\w-]+)'/g, /res\.type\(()/g];
/**
 * Keys of `res.set({…})`, of `…_HEADERS = {…}` and of the `headers` of an `ApiError` (the error
 * handler answers them); not the headers of requests the server sends (webhooks, URL imports).
 */
const SET_OBJECTS = /(?:res\.set\(\{|_HEADERS\s*=\s*\{|new ApiError\((?:(?!new ApiError)[\s\S]){0,600}?headers:\s*\{)([^}]*)\}/g;

function setHeaders(texts: string[]): Set<string> {
  const found = matches(texts, SETS);
  found.delete('');
  if (texts.some((t) => /res\.type\(/.test(t))) found.add('content-type');
  for (const text of texts) {
    for (const object of text.matchAll(SET_OBJECTS)) for (const key of object[1].matchAll(new RegExp(KEY, 'g'))) found.add((key[1] ?? key[2]).toLowerCase());
  }
  return found;
}

/** The header parameters and response headers of the document of an instance with every package. */
async function documented(): Promise<{ requests: Set<string>; responses: Set<string> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-cors-'));
  const api = createEntityApi(pimOptions({ ...readConfig({ LOG_LEVEL: 'silent' }), databaseUrl: 'sqlite::memory:', storageDir: path.join(dir, 'files') }));
  const requests = new Set<string>();
  const responses = new Set<string>();
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const item = node as Record<string, unknown>;
    if (item.in === 'header' && typeof item.name === 'string') requests.add(item.name.toLowerCase());
    if (item.headers && typeof item.headers === 'object' && !Array.isArray(item.headers)) for (const name of Object.keys(item.headers)) responses.add(name.toLowerCase());
    Object.values(item).forEach(walk);
  };
  try {
    walk(api.openapi());
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { requests, responses };
}

/** The names of the guide's table row and of the sample's constant, lower case. */
function guideLists(): Record<'allow' | 'expose', { table: string[]; sample: string[] }> {
  const text = fs.readFileSync(GUIDE, 'utf8');
  const section = text.slice(text.indexOf('## CORS'), text.indexOf('\n## ', text.indexOf('## CORS') + 1));
  const row = (label: string) => [...(new RegExp(`^\\| ${label} \\(.*?\\) \\| (.*) \\|$`, 'm').exec(section)?.[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1].toLowerCase());
  const sample = samplesOf(GUIDE).find((s) => s.code.includes('const ALLOW'))?.code ?? '';
  const constant = (name: string) => {
    const start = sample.indexOf(`const ${name} =`);
    const value = sample.slice(start, sample.indexOf(';', start));
    return [...value.matchAll(/'([^']*)'/g)].flatMap((m) => m[1].split(',')).map((h) => h.trim().toLowerCase()).filter(Boolean);
  };
  return { allow: { table: row('allow'), sample: constant('ALLOW') }, expose: { table: row('expose'), sample: constant('EXPOSE') } };
}

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

describe('the CORS lists of the embedding guide', () => {
  const texts = sources();
  const guide = guideLists();
  let doc: { requests: Set<string>; responses: Set<string> };
  beforeAll(async () => {
    doc = await documented();
  });

  it('are the same in the table and in the sample', () => {
    expect(guide.allow.table.length).toBeGreaterThan(10);
    expect(sorted(guide.allow.sample)).toEqual(sorted(guide.allow.table));
    expect(sorted(guide.expose.sample)).toEqual(sorted(guide.expose.table));
  });

  it('allow every request header the packages read or document, and none they do not', () => {
    const read = matches(texts, READS);
    // The scan sees the headers read in core, files and sharing (it is no empty set passing by default).
    expect([...read]).toEqual(expect.arrayContaining(['authorization-token', 'last-event-id', 'if-range', 'sharing-password', 'with-meta', 'idempotency-key']));
    const needed = sorted([...read, ...doc.requests, ...READ_BY_PARSERS].filter((h) => !SENT_BY_THE_BROWSER.includes(h)));
    expect(sorted(guide.allow.table)).toEqual(needed);
  });

  it('expose every response header the packages set or document that a script reads, and none they do not', () => {
    const set = setHeaders(texts);
    expect([...set]).toEqual(expect.arrayContaining(['x-request-id', 'x-status-reason', 'retry-after', 'content-range', 'etag', 'content-disposition']));
    const needed = sorted([...set, ...doc.responses].filter((h) => !SAFELISTED.includes(h) && !NOT_FOR_SCRIPTS.includes(h)));
    expect(sorted(guide.expose.table)).toEqual(needed);
  });
});
