import request from 'supertest';
import sharing from '@entity-records/sharing';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { binary, dataUrl, startFilesApi, type FilesTestApi } from '../../files/test/helpers';

/**
 * A share link's download is a write the server makes without a logged change (it counts `used`
 * and moves the version): the record's listening timestamp moves after it too (CONTRACT §16).
 */
describe.each(TEST_DBS)('listening to a Sharing on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing] });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('moves the timestamp after every download, which changes used and the ETag but logs no change', async () => {
      const file = (await t.post(`${base}/File`, { name: 'listened.txt', fileContents: dataUrl('listened', 'text/plain') }).expect(200)).body;
      const s = (await t.post(`${base}/Sharing`, { fileId: file.id }).expect(200)).body;
      const { timestamp, endpoint } = (await t.post(`${base}/startEntityListening`, { entityName: 'Sharing', entityId: s.id }).expect(200)).body;
      const seen = [timestamp as number];
      const tags = [(await t.get(`${base}/Sharing/${s.id}`).expect(200)).headers.etag];
      for (let i = 1; i <= 3; i++) {
        await request(t.server).get(`/sharings/${s.id}.txt`).buffer(true).parse(binary).expect(200);
        const read = await t.get(`${base}/Sharing/${s.id}`).expect(200);
        expect(read.body.used).toBe(i);
        tags.push(read.headers.etag);
        seen.push((await request(t.server).get(`/${endpoint}`).expect(200)).body.timestamp);
      }
      expect(new Set(tags).size).toBe(4);
      expect(new Set(seen).size).toBe(4);
      // Each stays within the second the record last changed in.
      for (const at of seen) expect(Math.floor(at)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
      const stream = (await t.get(`/api/entityStream?entityName=Sharing&id=${s.id}`).expect(200)).body;
      expect(stream.list.map((c: { action: string }) => c.action)).toEqual(['Create']);
    });
  });
});
