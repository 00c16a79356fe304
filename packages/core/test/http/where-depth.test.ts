import http from 'node:http';
import request from 'supertest';
import { systemContext } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';
import { bracketWhere, jsonWhere } from './list-helpers';

/** How a group holds its items: always a list, always one item object, or each in turn. */
type Form = 'list' | 'single' | 'mixed';
const FORMS: Form[] = ['list', 'single', 'mixed'];

/** A where item of `groups` nested groups (`and`, `or`, `not` in turn) around one condition, each group's value in `form`. */
function nested(groups: number, form: Form): Record<string, unknown> {
  let item: Record<string, unknown> = { type: 'isNotNull', attribute: 'id' };
  for (let i = 0; i < groups; i++) {
    const asList = form === 'list' || (form === 'mixed' && i % 2 === 0);
    item = { type: ['and', 'or', 'not'][i % 3], value: asList ? [item] : item };
  }
  return item;
}

const TOO_DEEP = { code: 'CORE_INVALID_QUERY', message: 'where must not nest deeper than 20 levels' };
/** Depths past the limit: just past, and those an audit found accepted in the single-item form. */
const REFUSED = [21, 30, 40];

/** CONTRACT §17: `where` nested deeper than 20 groups is 400, whatever form each group's value takes. */
describe.each(TEST_DBS)('the depth of a where on %s', (kind) => {
  let t: TestApi;
  // Room for long bracket-form query strings, as the example server gives (Node's default is 16 KiB).
  let server: http.Server;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    server = http.createServer({ maxHeaderSize: 512 * 1024 }, t.app);
  });
  afterAll(async () => {
    server.close();
    await t.close();
  });

  const jobCount = async () => (await t.get('/api/Job?totalOnly=true').expect(200)).body.total as number;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    const list = (query: string) => request(server).get(`${base}/Product?${query}&totalOnly=true`).set('Authorization-Token', t.token);
    /** The where of a list in each way a query string carries it. */
    const queries = (item: Record<string, unknown>) => ({
      'JSON list': jsonWhere([item]),
      'JSON single item': jsonWhere(item),
      bracket: bracketWhere([item]),
    });

    it.each(FORMS)('lists with 20 nested groups and refuses 21 and more (400), groups given in %s form, in the JSON and bracket query forms', async (form) => {
      for (const [how, query] of Object.entries(queries(nested(20, form)))) {
        const res = await list(query);
        expect({ how, status: res.status }).toEqual({ how, status: 200 });
      }
      for (const groups of REFUSED) {
        for (const [how, query] of Object.entries(queries(nested(groups, form)))) {
          const res = await list(query);
          expect({ how, groups, status: res.status, error: res.body.error }).toEqual({ how, groups, status: 400, error: expect.objectContaining(TOO_DEEP) });
        }
      }
    });

    it.each(FORMS)('takes an entityMassUpdate where of 20 nested groups as a job and refuses 21 and more (400) without one, groups in %s form', async (form) => {
      const body = (groups: number) => ({ entityName: 'Product', where: [nested(groups, form)], values: { mpn: 'depth' } });
      const { jobId } = (await t.post(`${base}/entityMassUpdate`, body(20)).expect(200)).body;
      expect((await finishedJob(t, { base, id: jobId })).status).toBe('Success');
      const jobs = await jobCount();
      // 40 groups each in a list are 81 levels of JSON: refused as a body too deep before the where is read.
      for (const groups of form === 'list' ? [21, 30] : REFUSED) {
        for (const send of [t.post, t.patch]) {
          const res = await send(`${base}/entityMassUpdate`, body(groups));
          expect({ groups, status: res.status, error: res.body.error }).toEqual({ groups, status: 400, error: expect.objectContaining(TOO_DEEP) });
        }
      }
      expect(await jobCount()).toBe(jobs);
    });
  });

  it.each(FORMS)('fails a mass update job whose where nests 21 groups in %s form, started by the host', async (form) => {
    const id = await t.api.jobs.start('massUpdate', { entityName: 'Product', where: [nested(21, form)], values: { mpn: 'depth' } }, systemContext());
    expect(await finishedJob(t, { base: '/api', id })).toMatchObject({ status: 'Failed', message: TOO_DEEP.message });
  });
});
