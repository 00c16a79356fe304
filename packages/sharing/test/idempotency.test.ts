import sharing from '@entity-records/sharing';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { dataUrl, startFilesApi, type FilesTestApi } from '../../files/test/helpers';

/** `Idempotency-Key` on `POST /Sharing` (CONTRACT §16): one share link per key. */
describe.each(TEST_DBS)('idempotent sharings on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing] });
  });
  afterAll(() => t.close());

  const sharingsOf = async (fileId: string) =>
    (await t.get(`/api/Sharing?totalOnly=true&where[0][type]=equals&where[0][attribute]=fileId&where[0][value]=${fileId}`).expect(200)).body.total as number;

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    it('creates one sharing for a key and replays it, secret link included; another body is 422', async () => {
      const file = (await t.post(`${base}/File`, { name: `shared-${g}.txt`, fileContents: dataUrl('shared', 'text/plain') }).expect(200)).body;
      const key = `sharing-${kind}-${g}-${Date.now()}`;
      const first = await t.post(`${base}/Sharing`, { fileId: file.id, allowedUsage: 3 }).set('Idempotency-Key', key).expect(200);
      expect(first.body.link).toContain(first.body.id);
      const again = await t.post(`${base}/Sharing`, { allowedUsage: 3, fileId: file.id }).set('Idempotency-Key', key).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(await sharingsOf(file.id)).toBe(1);
      const other = await t.post(`${base}/Sharing`, { fileId: file.id, allowedUsage: 4 }).set('Idempotency-Key', key).expect(422);
      expect(other.body.error.code).toBe('CORE_IDEMPOTENCY_MISMATCH');
      expect(await sharingsOf(file.id)).toBe(1);
      // A refused sharing (a client-chosen id) is kept as refused.
      const refused = await t.post(`${base}/Sharing`, { id: 'chosen', fileId: file.id }).set('Idempotency-Key', `${key}-r`).expect(400);
      const refusedAgain = await t.post(`${base}/Sharing`, { id: 'chosen', fileId: file.id }).set('Idempotency-Key', `${key}-r`).expect(400);
      expect(refusedAgain.body).toEqual(refused.body);
      expect(refusedAgain.headers['idempotent-replayed']).toBe('true');
    });
  });
});
