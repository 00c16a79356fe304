import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { TEST_DBS } from '../../../test/support/databases';
import { slowUpload } from '../../../test/support/slow-upload';
import { listFiles, startFilesApi } from './helpers';

jest.setTimeout(60_000);

/**
 * CONTRACT §17: closing removes the temporary files of uploads still running, and every 503
 * carries `Retry-After`. The example server drops such an upload's connection when it exits
 * (test/reliability/shutdown.test.ts); a host that keeps serving answers it.
 */
describe.each(TEST_DBS)('an upload cut off by close() on %s', (kind) => {
  it('answers 503 CORE_SHUTTING_DOWN with Retry-After once its body is in, stores nothing and leaves no temporary file', async () => {
    const t = await startFilesApi(kind, {}, { closeGraceMs: 300 });
    const server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const temporaries = () => listFiles(path.join(t.storageDir, 'tmp'));
    // Half the file, then nothing until `finish()`: in flight past the grace period.
    const upload = slowUpload({ url, token: t.token, name: 'cut.bin', size: 2 * 1024 * 1024, pieces: 2, piecesOf: 4, everyMs: 50 });
    try {
      for (let i = 0; i < 200 && temporaries().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(temporaries()).toHaveLength(1);
      await t.api.close();
      expect(temporaries()).toEqual([]);
      // The answer waits for the rest of the body (the server reads it rather than break the connection).
      upload.finish();
      const { status, headers, body } = await upload.answer;
      expect({ status, retryAfter: headers['retry-after'], error: JSON.parse(body).error.code }).toEqual({ status: 503, retryAfter: '5', error: 'CORE_SHUTTING_DOWN' });
      expect(listFiles(t.storageDir)).toEqual([]);
    } finally {
      upload.abort();
      server.closeAllConnections();
      server.close();
      await t.close();
    }
  });
});
