import sharing from '@entity-records/sharing';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { dataUrl, startFilesApi, type FilesTestApi } from '../../files/test/helpers';

/**
 * A sharing must name its file: a permanent delete of a file that a sharing names (in the bin too)
 * is 409 CORE_CONFLICT and keeps file, contents and link; once the sharing is gone it goes through.
 */
describe.each(TEST_DBS)('permanent deletes of shared files on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing] });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    it('refuses to purge a file that a sharing names, and purges it once the sharing is gone', async () => {
      const file = (await t.post(`${base}/File`, { name: `kept-${g}.txt`, fileContents: dataUrl('kept', 'text/plain') }).expect(200)).body.id as string;
      const share = (await t.post(`${base}/Sharing`, { fileId: file }).expect(200)).body;
      const refused = await t.del(`${base}/File/${file}`).set('permanently', 'true').expect(409);
      expect(refused.body.error).toMatchObject({ code: 'CORE_CONFLICT', details: { entity: 'File', id: file, by: { entity: 'Sharing', field: 'file' } } });
      expect((await t.get(`${base}/Sharing/${share.id}`).expect(200)).body).toMatchObject({ fileId: file, available: true });
      await t.get(`${base}/File/${file}/download`).expect(200);

      // A sharing in the bin still names it: restored, it would have no file.
      await t.del(`${base}/Sharing/${share.id}`).expect(200);
      await t.del(`${base}/File/${file}`).set('permanently', 'true').expect(409);
      await t.del(`${base}/Sharing/${share.id}`).set('permanently', 'true').expect(200);
      await t.del(`${base}/File/${file}`).set('permanently', 'true').expect(200);
      await t.get(`${base}/File/${file}`).expect(404);
    });
  });
});
