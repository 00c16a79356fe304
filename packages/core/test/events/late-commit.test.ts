import type { AddressInfo } from 'node:net';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { openSse, type SseClient, type SseEvent } from '../../../../test/support/sse';

jest.setTimeout(60_000);

const describePg = TEST_DBS.includes('postgres') ? describe : describe.skip;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seqAndRecord = (e: SseEvent) => {
  const { seq, recordId, action } = JSON.parse(e.data) as { seq: number; recordId: string; action: string };
  return { seq, recordId, action };
};

/**
 * A change whose transaction commits seconds after a later change committed (CONTRACT §16: a
 * subscriber misses nothing, and a reconnect with the last id it saw replays the rest). SQLite
 * writes one transaction at a time, so its changes commit in `seq` order and no such gap arises.
 */
describePg('a change that commits late, on postgres', () => {
  let t: TestApi;
  let url: string;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    t = await startTestApi('postgres', { entities: testEntities });
    url = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('reaches subscribers before the changes after it, in seq order, however late it commits (generation %s)', async (_g, base) => {
    const brand = (await t.post(`${base}/Brand`, { name: `Late ${base}` }).expect(200)).body.id as string;
    const es = await openSse(`${url}${base}/events?entityName=Brand`, { 'Authorization-Token': t.token });
    clients.push(es);
    // Another client of the database logs a change of the brand and keeps its transaction open
    // for longer than any rule of thumb would wait; a write through the API commits meanwhile.
    const trx = await t.api.database.knex.transaction();
    try {
      const [{ seq }] = (await trx('record_change')
        .insert({ entity_type: 'Brand', record_id: brand, action: 'Update', diff: JSON.stringify({ code: { was: null, became: 'late' } }), created_at: '2026-01-01 00:00:00' })
        .returning('seq')) as { seq: string }[];
      const later = (await t.post(`${base}/Brand`, { name: `After the late one ${base}` }).expect(200)).body.id as string;
      await sleep(3000);
      // Nothing after the open transaction's seq has gone out yet: the client would skip it.
      expect(es.events.map(seqAndRecord)).toEqual([]);
      await trx.commit();
      await es.next((e) => seqAndRecord(e).recordId === later);
      expect(es.events.map(seqAndRecord)).toEqual([
        { seq: Number(seq), recordId: brand, action: 'Update' },
        { seq: Number(seq) + 1, recordId: later, action: 'Create' },
      ]);
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }
  });

  it('passes a gap once the transaction that left it has rolled back', async () => {
    const es = await openSse(`${url}/api/events?entityName=Brand`, { 'Authorization-Token': t.token });
    clients.push(es);
    const trx = await t.api.database.knex.transaction();
    await trx('record_change').insert({ entity_type: 'Brand', record_id: 'rolled-back', action: 'Update', diff: '{}', created_at: '2026-01-01 00:00:00' });
    const later = (await t.post('/api/Brand', { name: 'After a rolled-back change' }).expect(200)).body.id as string;
    await sleep(300);
    expect(es.events).toEqual([]);
    await trx.rollback();
    await es.next((e) => seqAndRecord(e).recordId === later);
    expect(es.events.map((e) => seqAndRecord(e).recordId)).toEqual([later]);
  });
});
