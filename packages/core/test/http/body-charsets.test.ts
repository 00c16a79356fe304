import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/** A JSON text as UTF-16 bytes (little endian, with its byte order mark, as `charset=utf-16` reads it). */
const utf16 = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);

/**
 * A body in another charset the parser decodes (`utf-16`) is held to the same rules as UTF-8
 * (CONTRACT §17: no input answers 500): an escaped NUL or lone surrogate is 400 with the issue's
 * path, on both databases alike (PostgreSQL stores no NUL: it was a 500 there), and nothing is
 * written.
 */
describe.each(TEST_DBS)('bodies in UTF-16 on %s', (kind) => {
  let t: TestApi;
  const errors: string[] = [];
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, logger: { info() {}, warn() {}, error: (facts: unknown, message?: string) => void errors.push(message ?? String(facts)) } });
  });
  afterAll(() => t.close());
  afterEach(() => expect(errors.splice(0)).toEqual([]));

  const brands = async () => (await t.get('/api/Brand?select=name&maxSize=1000').expect(200)).body.list.map((b: { name: string }) => b.name);
  const send = (path: string, text: string) =>
    request(t.server)
      .post(path)
      .set('Authorization-Token', t.token)
      .set('Content-Type', 'application/json; charset=utf-16')
      .serialize((body: Buffer) => body as never)
      .send(utf16(text));
  const issues = (res: request.Response) => ({ status: res.status, code: res.body.error?.code, issues: res.body.error?.details?.issues?.map((i: { path: unknown; code: string }) => ({ path: i.path, code: i.code })) });

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('refuses an escaped NUL or lone surrogate (400), on every write, and writes nothing', async () => {
      const before = await brands();
      expect(issues(await send(`${base}/Brand`, '{"name":"a\\u0000b"}'))).toEqual({ status: 400, code: 'CORE_VALIDATION_FAILED', issues: [{ path: ['name'], code: 'nul_character' }] });
      expect(issues(await send(`${base}/upsert`, '[{"entity":"Brand","payload":{"name":"u\\u0000"}}]'))).toEqual({
        status: 400,
        code: 'CORE_VALIDATION_FAILED',
        issues: [{ path: [0, 'payload', 'name'], code: 'nul_character' }],
      });
      expect(issues(await send(`${base}/Brand`, '{"name":"s\\ud800t"}'))).toEqual({ status: 400, code: 'CORE_VALIDATION_FAILED', issues: [{ path: ['name'], code: 'lone_surrogate' }] });
      expect(await brands()).toEqual(before);
    });

    it('still reads a well-formed UTF-16 body', async () => {
      const res = await send(`${base}/Brand`, `{"name":"caf\u00e9 \ud83d\ude00 ${base}"}`);
      expect(res.status).toBe(200);
      expect(res.body.name).toBe(`caf\u00e9 \ud83d\ude00 ${base}`);
    });
  });
});
