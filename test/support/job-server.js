// A small server for restart and multi-process tests: the compiled core with a Product entity, jobs
// retried quickly, idempotency leases as short as IDEMPOTENCY_LEASE_SECONDS says.
const { createEntityApi, defineEntity } = require('../../packages/core/dist');
const express = require('express');

const Product = defineEntity({
  name: 'Product',
  fields: { name: { type: 'varchar', required: true }, sku: { type: 'varchar', unique: true }, quantity: { type: 'int' } },
});

async function main() {
  const api = createEntityApi({
    database: process.env.DATABASE_URL,
    entities: [Product],
    admin: { userName: 'admin', password: process.env.ADMIN_PASSWORD },
    auth: { passwordCost: 14 },
    jobs: { expireInSeconds: Number(process.env.JOB_EXPIRE_SECONDS || 3) },
    idempotency: { leaseSeconds: Number(process.env.IDEMPOTENCY_LEASE_SECONDS || 60) },
    logger: { info() {}, warn() {}, error() {} },
  });
  await api.ready();
  const server = express().use(api.router).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
  process.on('SIGTERM', () => server.close(() => api.close().then(() => process.exit(0))));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
