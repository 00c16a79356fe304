import request from 'supertest';
import type { EntityApiOptions } from '@entity-records/core';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { Brand, Category, Product } from '../../../../test/support/fixtures';

/** The test fixtures with attributes on Product and Category, and two languages. */
export const attributeEntities = [Brand, { ...Category, hasAttributes: true }, { ...Product, hasAttributes: true }];

export const LANGUAGES = ['en_US', 'de_DE'];

export function startAttributeApi(kind: 'sqlite' | 'postgres', options: Partial<EntityApiOptions> = {}): Promise<TestApi> {
  return startTestApi(kind, { entities: attributeEntities, languages: LANGUAGES, ...options });
}

export const FLAT = { 'Flatten-Attributes': 'true' };

/** A measure with units kg (default) and g. */
export async function createWeight(t: TestApi, code: string): Promise<{ measureId: string; kg: string; g: string }> {
  const measureId = (await t.post('/api/Measure', { name: 'Weight', code }).expect(200)).body.id;
  const kg = (await t.post('/api/Unit', { name: 'kg', code: 'kg', measureId, factor: 1, isDefault: true }).expect(200)).body.id;
  const g = (await t.post('/api/Unit', { name: 'g', code: 'g', measureId, factor: 0.001 }).expect(200)).body.id;
  return { measureId, kg, g };
}

/** Creates an attribute (of Product unless said) through generation A and returns its id. */
export async function createAttribute(t: TestApi, body: Record<string, unknown>): Promise<string> {
  const res = await t.post('/api/Attribute', { entityType: 'Product', name: body.code, ...body });
  if (res.status !== 200) throw new Error(`attribute ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

let serial = 0;
/** A unique suffix for codes and names, so tests of one instance do not collide. */
export const unique = (prefix: string): string => `${prefix}${(serial += 1)}`;

/** A user holding a new role with these scopes, and a client acting as them. */
export async function userWith(t: TestApi, scopes: Record<string, Record<string, unknown>>) {
  const name = unique('user');
  const roleId = (await t.post('/api/Role', { name: `role ${name}`, scopes }).expect(200)).body.id;
  await t.post('/api/User', { userName: name, password: 'pw-123456', rolesIds: [roleId] }).expect(200);
  const token = (await request(t.server).get('/api/userSession').auth(name, 'pw-123456').set('Authorization-Token-Only', 'true').expect(200)).body
    .authorizationToken as string;
  const withToken = (test: request.Test) => test.set('Authorization-Token', token);
  return {
    get: (path: string) => withToken(request(t.server).get(path)),
    post: (path: string, body?: unknown) => withToken(request(t.server).post(path)).send(body as object),
    patch: (path: string, body?: unknown) => withToken(request(t.server).patch(path)).send(body as object),
    del: (path: string, body?: unknown) => withToken(request(t.server).delete(path)).send(body as object),
  };
}

/** The ids of a list answer, in order. */
export const ids = (body: { list: { id: string }[] }): string[] => body.list.map((r) => r.id);
