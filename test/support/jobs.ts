import type { Requests } from './api';

const ENDED = ['Success', 'Failed', 'Canceled'];

/** A job as the API answers it (tests read its `result` freely). */
export type JobAnswer = Record<string, any>;

/**
 * Waits for a job to end and answers it, read by `client` (the admin's `t`, or a user's client):
 * asks every `everyMs` until `withinMs` have passed, then throws.
 */
export async function finishedJob(
  client: Pick<Requests, 'get'>,
  { base, id }: { base: string; id: string },
  { withinMs = 60_000, everyMs = 50 }: { withinMs?: number; everyMs?: number } = {},
): Promise<JobAnswer> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const job = (await client.get(`${base}/Job/${id}`).expect(200)).body as JobAnswer;
    if (ENDED.includes(job.status as string)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} did not finish within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
