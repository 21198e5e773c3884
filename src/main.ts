import { buildGateway } from './app.js';
import { ConfigError, loadConfig } from './config/config.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`voxgate: configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const gateway = await buildGateway(config);
  if (gateway.mainAccount.generated) {
    // Printed once, on the start that generated them; they are never logged.
    process.stdout.write(
      `voxgate: generated the main account\n  auth id:    ${gateway.mainAccount.authId}\n  auth token: ${gateway.mainAccount.authToken}\n`,
    );
  }
  await gateway.listen();
  const stop = async (signal: string) => {
    gateway.app.log.info({ signal }, 'shutting down');
    await gateway.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  // SIP message tracing, switched at run time: `kill -USR2 <pid>` turns it on, again off.
  process.on('SIGUSR2', () => {
    gateway.sip.setTrace(!gateway.sip.tracing);
    gateway.app.log.info({ tracing: gateway.sip.tracing }, 'SIP tracing switched');
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`voxgate: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
