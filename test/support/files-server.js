// A server for fault tests of file uploads: the compiled core and files plugin, its options from
// the environment, and a storage that can be made slow to read chunk pieces (so that the joining
// of a chunked upload takes long enough to be interrupted).
const { createEntityApi } = require('../../packages/core/dist');
const files = require('../../packages/files/dist').default;
const { LocalStorage } = require('../../packages/files/dist');
const express = require('express');

const SLOW_MS = Number(process.env.SLOW_CHUNK_READ_MS || 0);

/** Local storage whose reads of chunk pieces start only after SLOW_MS. */
class SlowChunkReads extends LocalStorage {
  async read(key, range) {
    if (SLOW_MS && key.startsWith('chunks/')) await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
    return super.read(key, range);
  }
}

async function main() {
  const api = createEntityApi({
    database: process.env.DATABASE_URL,
    entities: [],
    admin: { userName: 'admin', password: process.env.ADMIN_PASSWORD },
    auth: { passwordCost: 14 },
    plugins: [
      [
        files,
        {
          storage: new SlowChunkReads(process.env.STORAGE_DIR),
          fileUrlAllowedHosts: ['127.0.0.1'],
          assemblyTimeoutMinutes: Number(process.env.ASSEMBLY_TIMEOUT_MINUTES || 10),
        },
      ],
    ],
    logger: { info() {}, warn() {}, error() {} },
  });
  await api.ready();
  const server = express().use(api.router).listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`files server listening on ${process.env.PORT}`));
  process.on('SIGTERM', () => {
    server.close();
    api.close().then(() => process.exit(0));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
