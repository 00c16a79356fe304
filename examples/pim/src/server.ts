import { createHttpServer } from '@entity-records/core';
import { createPim } from './app';
import { readConfig } from './config';

async function main(): Promise<void> {
  const config = readConfig();
  const { app, api, generatedPassword, adminRestored, demoProducts } = await createPim(config);
  if (demoProducts) console.log(`Added demo data: ${demoProducts} products with brands, categories, attributes and images (DEMO_DATA=0 starts empty).`);
  if (generatedPassword) {
    console.log(`Created user '${config.adminUserName}' with password: ${generatedPassword}`);
    console.log('This password is shown only once.');
  }
  if (adminRestored.madeAdmin) console.log(`Made user '${config.adminUserName}' an active admin again (ADMIN_PASSWORD is set).`);
  if (adminRestored.passwordReset) console.log(`Set the password of user '${config.adminUserName}' from ADMIN_PASSWORD.`);
  // Long lists in `where` travel in the query string: room for about 10,000 short values.
  // Requests born with Express's prototypes; Node's refusals answered with the API's JSON errors.
  const server = createHttpServer(app, { maxHeaderSize: 256 * 1024 });
  server.once('error', (error) => {
    // A port in use, or a HOST this machine does not have: say so and stop.
    console.error(`Cannot listen on ${config.host}:${config.port}: ${error.message}`);
    void api.close().finally(() => process.exit(1));
  });
  server.listen(config.port, config.host, () => {
    // The address listened on; the public URL (PUBLIC_URL, e.g. behind a proxy) when it differs.
    const address = server.address();
    const bound = address && typeof address === 'object' ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` : `http://${config.host}:${config.port}`;
    const publicPart = config.publicUrl === bound ? '' : `, public URL ${config.publicUrl}`;
    console.log(`PIM example listening on ${bound}${publicPart} (API docs: ${config.publicUrl}/apidocs/)`);
  });
  // No new connections; the requests in flight finish (within CLOSE_GRACE_MS), running jobs go
  // back to the queue, uploads in progress leave no temporary files, the pool closes; then exit 0.
  const stop = (signal: NodeJS.Signals) => {
    console.log(`${signal}: finishing the requests in flight, then stopping`);
    server.close();
    api.close().then(
      () => {
        server.closeAllConnections();
        process.exit(0);
      },
      (error: unknown) => {
        console.error(`Stopping failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error) => {
  console.error(`The PIM example could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
