import type { Requests } from './api';

/** Who made a record and who changed it last, and when: what a write that changes it must move. */
export interface Stamp {
  createdAt: string;
  createdById: string;
  modifiedAt: string;
  modifiedById: string;
}

/** The stamp of a record, read through `client` (`GET /api/{entity}/{id}`). */
export async function stampOf(client: Requests, entity: string, id: string): Promise<Stamp> {
  const { createdAt, createdById, modifiedAt, modifiedById } = (await client.get(`/api/${entity}/${id}`).expect(200)).body as Stamp;
  return { createdAt, createdById, modifiedAt, modifiedById };
}

/**
 * Runs `write` and answers the record's stamp after it, having checked that the write is what
 * changed it: before, its creator was its last modifier; after, only `by` and the time moved.
 */
export async function stampAfter(client: Requests, entity: string, id: string, { by, write }: { by: string; write: () => PromiseLike<unknown> }): Promise<Stamp> {
  const before = await stampOf(client, entity, id);
  expect(before.modifiedById).toBe(before.createdById);
  await write();
  const after = await stampOf(client, entity, id);
  expect(after).toEqual({ ...before, modifiedById: by, modifiedAt: expect.any(String) });
  expect(after.modifiedAt >= before.modifiedAt).toBe(true);
  return after;
}
