import express from 'express';
import { createEntityApi, createHttpServer, defineEntity } from '@entity-records/core';

const Brand = defineEntity({ name: 'Brand', fields: { name: { type: 'varchar', required: true, unique: true } } });

const api = createEntityApi({
  database: process.env.DATABASE_URL ?? 'sqlite:data/app.db',
  entities: [Brand],
  // Without ADMIN_PASSWORD a password is generated and printed once, on first start.
  admin: { userName: 'admin', password: process.env.ADMIN_PASSWORD },
});

const app = express();
app.use(api.router); // /api/…, /api/v1/…, /apidocs/
await api.ready(); // creates tables, columns and indexes, then the admin
const port = Number(process.env.PORT ?? 3000);
// Like app.listen, but Express runs about twice as fast on it (see createHttpServer).
createHttpServer(app).listen(port, '127.0.0.1', () => console.log(`Listening on http://127.0.0.1:${port} (API docs: /apidocs/)`));
