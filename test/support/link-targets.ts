import type { TestApi } from './api';

/** One change as a record's stream shows it. */
export type StreamItem = { action: string; diff: Record<string, { was: unknown; became: unknown }> };

/**
 * Categories and brands for products to link to, made through the API; `prefix` keeps their
 * names and codes apart from those of other tests.
 */
export async function linkTargets(t: TestApi, { prefix, categories, brands }: { prefix: string; categories: number; brands: number }): Promise<{ cats: string[]; brands: string[] }> {
  const cats: string[] = [];
  for (let i = 0; i < categories; i++) cats.push((await t.post('/api/Category', { name: `${prefix}${i}`, code: `${prefix.toLowerCase()}-c${i}` }).expect(200)).body.id);
  const made: string[] = [];
  for (let i = 0; i < brands; i++) made.push((await t.post('/api/Brand', { name: `${prefix} brand ${i}` }).expect(200)).body.id);
  return { cats, brands: made };
}

/** A record's changes, newest first (its stream, as the admin reads it). */
export const streamOf = async (t: TestApi, entity: string, id: string): Promise<StreamItem[]> => (await t.get(`/api/v1/${entity}/${id}/stream?maxSize=200`).expect(200)).body.list;
