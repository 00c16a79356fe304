import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApi } from './api';
import { openSse, type SseClient, type SseEvent } from './sse';

/** A change as a record's stream shows it. */
export type Change = { action: string; diff: Record<string, { was: unknown; became: unknown }> };
/** A change as a server-sent event carries it. */
export type ChangeData = Change & { seq: number; entityType: string; recordId: string };

/** What a test reads of a test app's changes: through both stream routes, and as server-sent events. */
export interface ChangeReaders {
  /** A record's changes through both stream routes (which must agree), oldest first. */
  changesOf(base: string, entity: string, id: string): Promise<Change[]>;
  /** The seq of the last of a record's `count` changes, as a client that saw it sends it back in Last-Event-ID. */
  seqOf(base: string, of: { id: string; count: number }): Promise<string>;
  /** The changes replayed after `seq` to a client that reconnects with Last-Event-ID, until `count` arrived. */
  replayed(base: string, after: { seq: string; ids: string[]; count: number }): Promise<ChangeData[]>;
  /** Closes the event clients opened so far (after each test). */
  closeClients(): void;
  /** Closes them and the server (after all tests). */
  close(): Promise<void>;
}

/** Serves `t` over HTTP on 127.0.0.1 (server-sent events need a socket) and reads its changes as its admin. */
export async function changeReaders(t: TestApi): Promise<ChangeReaders> {
  const server = http.createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clients: SseClient[] = [];
  const open = async (path: string, lastEventId: string) => {
    const es = await openSse(`${url}${path}`, { 'Authorization-Token': t.token, 'Last-Event-ID': lastEventId });
    clients.push(es);
    return es;
  };
  const data = (e: SseEvent): ChangeData => JSON.parse(e.data) as ChangeData;
  const closeClients = () => {
    for (const c of clients.splice(0)) c.close();
  };
  return {
    async changesOf(base, entity, id) {
      const atro = (await t.get(`${base}/entityStream?entityName=${entity}&id=${id}&maxSize=200`).expect(200)).body.list as Change[];
      const v1 = (await t.get(`/api/v1/${entity}/${id}/stream?maxSize=200`).expect(200)).body.list as Change[];
      expect(v1).toEqual(atro);
      return [...atro].reverse().map(({ action, diff }) => ({ action, diff }));
    },
    async seqOf(base, { id, count }) {
      const es = await open(`${base}/events?id=${id}`, '0');
      await es.next(() => es.events.length >= count);
      es.close();
      return es.events[count - 1].id as string;
    },
    async replayed(base, { seq, ids, count }) {
      const es = await open(`${base}/events?id=${ids.join(',')}`, seq);
      await es.next(() => es.events.length >= count);
      return es.events.map(data);
    },
    closeClients,
    async close() {
      closeClients();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
