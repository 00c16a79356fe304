import { startTestApi, type TestApi } from '../../../../test/support/api';
import { Brand, Category, Product } from '../../../../test/support/fixtures';
import type { EntityApiOptions } from '@entity-records/core';

/** The fixtures with attributes on Product, and two languages. */
export const attributeEntities = [Brand, Category, { ...Product, hasAttributes: true }];

export const LANGUAGES = ['en_US', 'de_DE'];

export function startAttributeApi(kind: 'sqlite' | 'postgres', options: Partial<EntityApiOptions> = {}): Promise<TestApi> {
  return startTestApi(kind, { entities: attributeEntities, languages: LANGUAGES, ...options });
}

export const FLAT = { 'Flatten-Attributes': 'true' };

/** The measure `weight` with units kg (default) and g. */
export async function createWeight(t: TestApi, code = 'weight'): Promise<{ measureId: string; kg: string; g: string }> {
  const measureId = (await t.post('/api/Measure', { name: 'Weight', code }).expect(200)).body.id;
  const kg = (await t.post('/api/Unit', { name: 'kg', code: 'kg', measureId, factor: 1, isDefault: true }).expect(200)).body.id;
  const g = (await t.post('/api/Unit', { name: 'g', code: 'g', measureId, factor: 0.001 }).expect(200)).body.id;
  return { measureId, kg, g };
}

/** Creates an attribute of Product through generation A. */
export async function createAttribute(t: TestApi, body: Record<string, unknown>): Promise<string> {
  const res = await t.post('/api/Attribute', { entityType: 'Product', name: body.code, ...body });
  if (res.status !== 200) throw new Error(`attribute ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}
