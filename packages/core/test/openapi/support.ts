import type { EntityApiOptions } from '@entity-records/core';
import request from 'supertest';
import { startTestApi, type TestApi } from '../../../../test/support/api';

export type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation | unknown>>;
  components: {
    securitySchemes: Record<string, unknown>;
    parameters: Record<string, { name: string; in: string }>;
    schemas: Record<string, { properties?: Record<string, unknown> }>;
  };
  security?: unknown[];
  tags?: { name: string }[];
};
export type Operation = {
  operationId?: string;
  responses?: Record<string, unknown>;
  parameters?: ({ $ref?: string; name?: string; in?: string })[];
  requestBody?: { content: Record<string, unknown> };
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
export const BASES = ['/api', '/api/v1'];

/** Every operation of the document with its path and method. */
export function operations(doc: Doc): { path: string; method: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ path, method, op: op as Operation })),
  );
}

/** Header names an operation documents, with `$ref` parameters resolved. */
export function headerNames(doc: Doc, op: Operation): string[] {
  return (op.parameters ?? [])
    .map((p) => (p.$ref ? doc.components.parameters[p.$ref.replace('#/components/parameters/', '')] : p))
    .filter((p) => p?.in === 'header')
    .map((p) => String(p.name).toLowerCase());
}

export async function fetchDocument(t: TestApi): Promise<Doc> {
  const res = await request(t.server).get('/apidocs/openapi.json').expect(200).expect('Content-Type', /application\/json/);
  return res.body as Doc;
}

/** Starts an instance and fetches the document it serves. */
export async function startWithDocument(kind: 'sqlite' | 'postgres', options: Omit<EntityApiOptions, 'database'>): Promise<{ t: TestApi; doc: Doc }> {
  const t = await startTestApi(kind, options);
  return { t, doc: await fetchDocument(t) };
}
