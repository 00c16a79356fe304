import type { UserClient } from '../../../../test/support/users';
import { finishedJob, type World } from './world';

export type Mode = 'create' | 'update';

/** What a write route answered: stored, or refused with what the route tells of the refusal. */
export type Outcome = { stored: true; record?: Record<string, unknown> } | { stored: false; status?: number; code?: string; message: string };

/** One write: who sends it, what it creates or updates, and the fields it writes. */
export interface WriteCall {
  world: World;
  user: UserClient;
  mode: Mode;
  /** The record an update writes. */
  id?: string;
  body: Record<string, unknown>;
}

export interface WriteRoute {
  name: string;
  modes: readonly Mode[];
  /** Routes that look records up by their keys (the upsert lookup rules concern only these). */
  upsert?: boolean;
  /** The instance the route runs on: the one whose Product upserts take the single-record path. */
  singlePath?: boolean;
  /** Only bodies this route can send (the link route: one link field); all when absent. */
  takes?(body: Record<string, unknown>): boolean;
  run(call: WriteCall): Promise<Outcome>;
}

/** The link a body of one link field names (`brandId`, `categoriesIds`), and its ids as a link route body. */
function linkOf(body: Record<string, unknown>): { link: string; body: { id?: unknown; ids?: unknown } } | undefined {
  const keys = Object.keys(body);
  if (keys.length !== 1) return undefined;
  const [key] = keys;
  if (key.endsWith('Ids') && Array.isArray(body[key])) return { link: key.slice(0, -3), body: { ids: body[key] } };
  if (key.endsWith('Id') && typeof body[key] === 'string') return { link: key.slice(0, -2), body: { id: body[key] } };
  return undefined;
}

type Answer = { status: number; body: { error?: { code: string; message: string } } & Record<string, unknown> };

const fromHttp = (res: Answer): Outcome =>
  res.status === 200 ? { stored: true, record: res.body } : { stored: false, status: res.status, code: res.body.error?.code, message: res.body.error?.message ?? '' };

const fromUpsertItem = (item: { status: string; message?: string; entity?: Record<string, unknown> }): Outcome =>
  item.status === 'Failed' ? { stored: false, message: item.message ?? '' } : { stored: true, record: item.entity };

const fromMassUpdate = (result: { updated: number; errors: { code: string; message: string }[] }): Outcome =>
  result.errors.length ? { stored: false, code: result.errors[0].code, message: result.errors[0].message } : { stored: true };

/** The payload of an upsert item: the record's id for an update. */
const payloadOf = ({ mode, id, body }: WriteCall) => (mode === 'update' ? { id, ...body } : body);

async function viaJob(call: WriteCall, { base, path, body }: { base: string; path: string; body: unknown }): Promise<Record<string, unknown> | Outcome> {
  const res = await call.user.post(`${base}/${path}`, body);
  if (res.status !== 200) return fromHttp(res);
  const job = await finishedJob(call.world.t, { base, id: res.body.jobId });
  if (job.status !== 'Success') throw new Error(`job ${String(job.id)} ended ${String(job.status)}: ${String(job.message)}`);
  return job.result as Record<string, unknown>;
}

const isOutcome = (value: unknown): value is Outcome => typeof value === 'object' && value !== null && 'stored' in value;

/** Every route that writes a record, in one path generation. */
export function writeRoutes(gen: 'A' | 'B', base: string): WriteRoute[] {
  const upsertPath = gen === 'A' ? `${base}/upsert` : `${base}/MassActions/action/upsert`;
  const upsert = async (call: WriteCall) => {
    const res = await call.user.post(upsertPath, [{ entity: 'Product', payload: payloadOf(call) }]);
    return res.status === 200 ? fromUpsertItem(res.body[0]) : fromHttp(res);
  };
  return [
    { name: `POST ${base}/Product`, modes: ['create'], run: async ({ user, body }) => fromHttp(await user.post(`${base}/Product`, body)) },
    gen === 'A'
      ? { name: `PATCH ${base}/Product/{id}`, modes: ['update'], run: async ({ user, id, body }) => fromHttp(await user.patch(`${base}/Product/${id}`, body)) }
      : { name: `PUT ${base}/Product/{id}`, modes: ['update'], run: async ({ user, id, body }) => fromHttp(await user.put(`${base}/Product/${id}`, body)) },
    { name: `${upsertPath} (set-based)`, modes: ['create', 'update'], upsert: true, run: upsert },
    { name: `${upsertPath} (single-record path)`, modes: ['create', 'update'], upsert: true, singlePath: true, run: upsert },
    {
      name: `${base}/upsertAsync (job)`,
      modes: ['create', 'update'],
      upsert: true,
      run: async (call) => {
        const result = await viaJob(call, { base, path: 'upsertAsync', body: [{ entity: 'Product', payload: payloadOf(call) }] });
        return isOutcome(result) ? result : fromUpsertItem((result as unknown as { status: string }[])[0]);
      },
    },
    {
      name: `POST ${base}/Product/{id}/{link}`,
      modes: ['update'],
      takes: (body) => linkOf(body) !== undefined,
      run: async ({ user, id, body }) => {
        const { link, body: ids } = linkOf(body) as NonNullable<ReturnType<typeof linkOf>>;
        const res = await user.post(`${base}/Product/${id}/${link}`, ids);
        return res.status === 200 && res.body === true ? { stored: true } : fromHttp(res);
      },
    },
    {
      name: `${base}/entityMassUpdate (ids)`,
      modes: ['update'],
      run: async ({ user, id, body }) => {
        const res = await user.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values: body });
        return res.status === 200 ? fromMassUpdate(res.body) : fromHttp(res);
      },
    },
    {
      name: `${base}/entityMassUpdate (where, job)`,
      modes: ['update'],
      run: async (call) => {
        const where = [{ type: 'equals', attribute: 'id', value: call.id }];
        const result = await viaJob(call, { base, path: 'entityMassUpdate', body: { entityName: 'Product', where, values: call.body } });
        return isOutcome(result) ? result : fromMassUpdate(result as never);
      },
    },
  ];
}
