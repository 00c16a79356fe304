// A small server for multi-process webhook tests: the compiled core with a Product entity and
// webhook options from the environment (short leases and waits), 127.0.0.1 allowed.
const { createEntityApi, defineEntity } = require('../../packages/core/dist');
const express = require('express');

const Product = defineEntity({
  name: 'Product',
  fields: { name: { type: 'varchar', required: true }, quantity: { type: 'int' } },
});

async function main() {
  const env = process.env;
  const api = createEntityApi({
    database: env.DATABASE_URL,
    entities: [Product],
    admin: { userName: 'admin', password: env.ADMIN_PASSWORD },
    auth: { passwordCost: 14 },
    webhooks: {
      allowedHosts: ['127.0.0.1'],
      leaseMs: Number(env.WEBHOOK_LEASE_MS || 60000),
      timeoutMs: Number(env.WEBHOOK_TIMEOUT_MS || 10000),
      retryBaseMs: Number(env.WEBHOOK_RETRY_BASE_MS || 200),
      pollMs: Number(env.WEBHOOK_POLL_MS || 200),
    },
    jobs: { worker: env.WORKER !== 'false' },
    logger: { info() {}, warn() {}, error() {} },
  });
  await api.ready();
  const server = express().use(api.router).listen(Number(env.PORT), '127.0.0.1', () => console.log(`webhook server listening on ${env.PORT}`));
  process.on('SIGTERM', () => server.close(() => api.close().then(() => process.exit(0))));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
