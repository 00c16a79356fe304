import { ApiError, createEntityApi, ensureAdmin, systemContext, type ApiRecord, type EntityApi } from '@entity-records/core';
import express, { type Express } from 'express';
import type { PimConfig } from './config';
import { mountHealth } from './health';
import { pimOptions } from './options';

/** The option lists the example's fields name, with their options. */
const LISTS: Record<string, { name: string; options: string[] }> = {
  product_status: { name: 'Product status', options: ['draft', 'active'] },
  product_tags: { name: 'Product tags', options: [] },
};

type Where = { type: 'equals'; attribute: string; value: string }[];

/** The record matching `where`, created from `data` when there is none; another server creating it first is fine. */
async function findOrCreate(api: EntityApi, entity: string, where: Where, data: Record<string, unknown>): Promise<ApiRecord> {
  const ctx = systemContext();
  const repository = api.repository(entity);
  const find = async () => (await repository.find(ctx, { where, maxSize: 1, collectionOnly: true })).list?.[0];
  const existing = await find();
  if (existing) return existing;
  try {
    return await repository.create(ctx, data);
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 'CORE_UNIQUE_VIOLATION')) throw error;
    const winner = await find();
    if (!winner) throw error;
    return winner;
  }
}

/** Creates the lists and options that do not exist yet (idempotent, also with several servers starting at once). */
async function seedLists(api: EntityApi): Promise<void> {
  for (const [code, { name, options }] of Object.entries(LISTS)) {
    const list = await findOrCreate(api, 'ExtensibleEnum', [{ type: 'equals', attribute: 'code', value: code }], { code, name });
    for (const [sortOrder, optionCode] of options.entries()) {
      const where: Where = [
        { type: 'equals', attribute: 'extensibleEnumId', value: list.id },
        { type: 'equals', attribute: 'code', value: optionCode },
      ];
      await findOrCreate(api, 'ExtensibleEnumOption', where, { code: optionCode, name: optionCode, sortOrder, extensibleEnumId: list.id });
    }
  }
}

/** The measures unit-bearing attributes use, with their units (the first is the default). */
const MEASURES: Record<string, { name: string; units: { code: string; name: string; factor: number }[] }> = {
  weight: {
    name: 'Weight',
    units: [
      { code: 'kg', name: 'kg', factor: 1 },
      { code: 'g', name: 'g', factor: 0.001 },
    ],
  },
};

/** Creates the measures and units that do not exist yet (idempotent, also with several servers starting at once). */
async function seedMeasures(api: EntityApi): Promise<void> {
  for (const [code, { name, units }] of Object.entries(MEASURES)) {
    const measure = await findOrCreate(api, 'Measure', [{ type: 'equals', attribute: 'code', value: code }], { code, name });
    for (const [i, unit] of units.entries()) {
      const where: Where = [
        { type: 'equals', attribute: 'measureId', value: measure.id },
        { type: 'equals', attribute: 'code', value: unit.code },
      ];
      await findOrCreate(api, 'Unit', where, { ...unit, measureId: measure.id, isDefault: i === 0 });
    }
  }
}

export interface Pim {
  app: Express;
  api: EntityApi;
  /** Set when the admin was created with a generated password. */
  generatedPassword?: string;
}

/** Builds the example app: every package composed, tables created, admin and lists seeded. */
export async function createPim(config: PimConfig): Promise<Pim> {
  const api = createEntityApi(pimOptions(config));
  await api.ready();
  const admin = await ensureAdmin(api, { userName: config.adminUserName, password: config.adminPassword });
  await seedLists(api);
  await seedMeasures(api);
  const app = express();
  app.disable('x-powered-by');
  mountHealth(app, api);
  app.use(api.router);
  return { app, api, generatedPassword: admin.password };
}
