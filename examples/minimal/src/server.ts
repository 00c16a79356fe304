import { createEntityApi, createHttpServer, defineEntity } from '@entity-records/core';
import express from 'express';

/** The smallest embedding: one entity, the router mounted in an existing Express app. */
const Note = defineEntity({
  name: 'Note',
  fields: { title: { type: 'varchar', required: true }, body: { type: 'text' } },
});

const api = createEntityApi({
  database: process.env.DATABASE_URL ?? 'sqlite::memory:',
  entities: [Note],
  admin: { userName: 'admin', password: process.env.ADMIN_PASSWORD ?? 'change-me-now' },
});

const app = express();
app.get('/health', (_req, res) => {
  res.json({ ok: true });
});
app.use(api.router);

const port = Number(process.env.PORT ?? 3001);
api
  .ready()
  .then(() => {
    // Like app.listen, but Express runs about twice as fast on it (see createHttpServer).
    const server = createHttpServer(app).listen(port, '127.0.0.1', () => console.log(`http://127.0.0.1:${port}/api/Note`));
    // Stop taking requests, then close the database, on Ctrl-C or a service manager's SIGTERM.
    const stop = () => server.close(() => void api.close().then(() => process.exit(0)));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  })
  .catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
