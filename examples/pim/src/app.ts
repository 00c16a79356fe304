import { createEntityApi, ensureAdmin, systemContext, type EntityApi } from '@entity-records/core';
import express, { type Express } from 'express';
import type { PimConfig } from './config';
import { pimOptions } from './options';

/** The option lists the example's fields name, with their options. */
const LISTS: Record<string, { name: string; options: string[] }> = {
  product_status: { name: 'Product status', options: ['draft', 'active'] },
  product_tags: { name: 'Product tags', options: [] },
};

/** Creates the lists and options that do not exist yet (idempotent). */
async function seedLists(api: EntityApi): Promise<void> {
  const ctx = systemContext();
  const lists = api.repository('ExtensibleEnum');
  const options = api.repository('ExtensibleEnumOption');
  for (const [code, { name, options: codes }] of Object.entries(LISTS)) {
    const found = await lists.find(ctx, { where: [{ type: 'equals', attribute: 'code', value: code }], collectionOnly: true });
    const listId = found.list?.[0]?.id ?? (await lists.create(ctx, { code, name })).id;
    for (const [sortOrder, optionCode] of codes.entries()) {
      const existing = await options.find(ctx, {
        where: [
          { type: 'equals', attribute: 'extensibleEnumId', value: listId },
          { type: 'equals', attribute: 'code', value: optionCode },
        ],
        totalOnly: true,
      });
      if (!existing.total) await options.create(ctx, { code: optionCode, name: optionCode, sortOrder, extensibleEnumId: listId });
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
  const app = express();
  app.disable('x-powered-by');
  app.use(api.router);
  return { app, api, generatedPassword: admin.password };
}
