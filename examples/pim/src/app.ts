import { ApiError, createEntityApi, ensureAdmin, systemContext, type ApiRecord, type EntityApi } from '@entity-records/core';
import express, { type Express } from 'express';
import type { PimConfig } from './config';
import { mountHealth } from './health';
import { demoImages, seedDemo } from './demo-seed';
import { pimOptions } from './options';

/** The option lists the example's fields name, with their options. */
const LISTS: Record<string, { name: string; options: string[] }> = {
  product_status: { name: 'Product status', options: ['draft', 'active'] },
  product_tags: { name: 'Product tags', options: [] },
};

/** A record to seed: found by its code (within its parent, given `parentField`), else created from `data`. */
interface Seed {
  entity: string;
  data: Record<string, unknown> & { code: string };
  parentField?: string;
}

/** The record a seed describes, created when there is none; another server creating it first is fine. */
async function findOrCreate(api: EntityApi, { entity, data, parentField }: Seed): Promise<ApiRecord> {
  const where = [{ type: 'equals', attribute: 'code', value: data.code }];
  if (parentField) where.push({ type: 'equals', attribute: parentField, value: data[parentField] as string });
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
    const list = await findOrCreate(api, { entity: 'ExtensibleEnum', data: { code, name } });
    for (const [sortOrder, optionCode] of options.entries()) {
      const data = { code: optionCode, name: optionCode, sortOrder, extensibleEnumId: list.id };
      await findOrCreate(api, { entity: 'ExtensibleEnumOption', data, parentField: 'extensibleEnumId' });
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
    const measure = await findOrCreate(api, { entity: 'Measure', data: { code, name } });
    for (const [i, unit] of units.entries()) {
      await findOrCreate(api, { entity: 'Unit', data: { ...unit, measureId: measure.id, isDefault: i === 0 }, parentField: 'measureId' });
    }
  }
}

export interface Pim {
  app: Express;
  api: EntityApi;
  /** Set when the admin was created with a generated password. */
  generatedPassword?: string;
  /** What this start changed of the admin user that existed (ADMIN_PASSWORD given). */
  adminRestored: AdminRestored;
  /** Products the demo data added on this start (0 when off, or the database had records). */
  demoProducts: number;
}

/** What a start changed of an existing admin user from ADMIN_PASSWORD. */
export interface AdminRestored {
  /** The password did not sign the user in and is now ADMIN_PASSWORD. */
  passwordReset: boolean;
  /** The user was no admin, or inactive, and is an active admin again. */
  madeAdmin: boolean;
}

/**
 * ADMIN_PASSWORD makes the user named ADMIN_USERNAME the instance's admin whatever an earlier
 * start or a request stored: when the password does not sign them in it becomes theirs (which
 * revokes their tokens, as any password change), and a user demoted or deactivated since is an
 * active admin again. So an instance left without an admin is recovered by a restart.
 */
async function restoreAdmin(api: EntityApi, admin: { userName: string; password: string }): Promise<AdminRestored> {
  const users = api.repository('User');
  const where = [{ type: 'equals', attribute: 'userName', value: admin.userName }];
  const user = (await users.find(systemContext(), { where, maxSize: 1, collectionOnly: true })).list?.[0];
  if (!user) return { passwordReset: false, madeAdmin: false };
  const madeAdmin = user.isAdmin !== true || user.isActive !== true;
  // Before the password is checked: an inactive user's password signs nobody in.
  if (madeAdmin) await users.update(systemContext(), user.id as string, { isAdmin: true, isActive: true });
  let passwordReset = false;
  try {
    await api.auth.verifyCredentials(admin.userName, admin.password);
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 'CORE_UNAUTHORIZED')) throw error;
    await users.update(systemContext(), user.id as string, { password: admin.password });
    passwordReset = true;
  }
  return { passwordReset, madeAdmin };
}

/** Builds the example app: every package composed, tables created, admin and lists seeded. */
export async function createPim(config: PimConfig): Promise<Pim> {
  const options = pimOptions(config);
  const images = demoImages();
  const api = createEntityApi({ ...options, plugins: [...(options.plugins ?? []), images.plugin] });
  await api.ready();
  const admin = await ensureAdmin(api, { userName: config.adminUserName, password: config.adminPassword });
  const adminRestored =
    !admin.created && config.adminPassword !== undefined
      ? await restoreAdmin(api, { userName: config.adminUserName, password: config.adminPassword })
      : { passwordReset: false, madeAdmin: false };
  await seedLists(api);
  await seedMeasures(api);
  const demoProducts = config.demoData ? await seedDemo(api, images.files()) : 0;
  const app = express();
  app.disable('x-powered-by');
  mountHealth(app, api);
  app.use(api.router);
  // Every other path: the JSON error body of the API, not Express's HTML page.
  app.use((_req, res) => {
    const error = new ApiError('CORE_NOT_FOUND', 'No such route');
    res.status(error.status).setHeader('X-Status-Reason', error.message).json(error.toJSON());
  });
  return { app, api, generatedPassword: admin.password, adminRestored, demoProducts };
}
