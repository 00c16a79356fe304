import { createPim } from './app';
import { readConfig } from './config';

async function main(): Promise<void> {
  const config = readConfig();
  const { app, api, generatedPassword } = await createPim(config);
  if (generatedPassword) {
    console.log(`Created user '${config.adminUserName}' with password: ${generatedPassword}`);
    console.log('This password is shown only once.');
  }
  const server = app.listen(config.port, config.host, () => {
    console.log(`PIM example listening on ${config.publicUrl} (API docs: ${config.publicUrl}/apidocs/)`);
  });
  const stop = () => {
    server.close();
    server.closeAllConnections();
    void api.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
