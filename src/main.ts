import { buildGateway } from './app.js';
import { ConfigError, loadConfig } from './config/config.js';
import { StoreUnavailable } from './core/errors.js';
import { logDestination, logFormat, type LogFormat } from './log-output.js';
import { describeBindFailure } from './port-clash.js';
import { applyRealtimePriority } from './realtime-priority.js';
import {
  CredentialsFileError,
  readMainAccountFile,
  writeMainAccountFile,
  type MainAccountFile,
} from './state/main-account-file.js';
import { logStartupSummary } from './startup-summary.js';
import type { MainAccount } from './state/main-account.js';

/** Undone when the start fails: a file naming an account that ends with this process. */
let undoOnFailedStart: (() => Promise<void>) | null = null;

/**
 * A rejection nothing observes is a bug, and the state it leaves is unknown: the process ends, as
 * Node's default would, but first says so in a line an operator's log search finds (Node's own
 * report of an Error is its bare stack).
 */
process.on('unhandledRejection', (reason: unknown) => {
  const described = reason instanceof Error ? (reason.stack ?? reason.message) : String(reason);
  process.stderr.write(`voxgate: unhandled rejection, exiting: ${described}\n`);
  process.exit(1);
});

async function main(): Promise<void> {
  let config;
  let format: LogFormat;
  const terminal = process.stdout.isTTY === true;
  try {
    config = loadConfig();
    format = logFormat(process.env, terminal);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`voxgate: configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  // Before anything starts threads of its own, so they inherit the scheduling.
  const priority =
    config.realtimePriority === null ? null : applyRealtimePriority(config.realtimePriority);
  const written: { file?: MainAccountFile } = {};
  let requestDrain = (): void => undefined;
  // VOXGATE_AUTH_ID/VOXGATE_AUTH_TOKEN win; otherwise what an earlier start handed out.
  const kept = config.authId ? null : await readMainAccountFile(config.dataDir);
  const inMemory = !config.redisUrl && config.dataDir === null;
  const gateway = await buildGateway(config, {
    keepGeneratedCredentials: async (account) => {
      written.file = await writeMainAccountFile(config.dataDir, account);
      // In memory the account ends with the process, and so does the file that names it.
      if (inMemory) undoOnFailedStart = () => written.file!.remove();
    },
    keptCredentials: kept,
    logStream: logDestination(format, terminal),
    onDrainRequested: () => requestDrain(),
  });
  logKeptCredentials(gateway.app.log, gateway.mainAccount);
  if (priority?.applied) {
    gateway.app.log.info(
      { priority: priority.priority, threads: priority.threads },
      'real-time scheduling (SCHED_RR) on',
    );
  } else if (priority) {
    gateway.app.log.warn(
      { priority: priority.priority, reason: priority.reason },
      'VOXGATE_REALTIME_PRIORITY could not be applied; running at normal priority',
    );
  }
  const { file } = written;
  if (file) {
    // Where the credentials are, never the token: a container's stdout is its log. A log line
    // like every other, so a log shipper reading JSON loses nothing.
    const note = file.temporary
      ? config.redisUrl
        ? '; there is no data directory: move the file somewhere safe'
        : '; there is no data directory, so the account and the file last until the gateway stops'
      : '';
    gateway.app.log.info(
      { authId: gateway.mainAccount.authId, credentials: file.path },
      `generated the main account ${gateway.mainAccount.authId}; its auth id and token are in ` +
        `${file.path} (readable by this user only)${note}`,
    );
  }
  try {
    await gateway.listen();
  } catch (error) {
    const clash = describeBindFailure(config, error);
    if (!clash) throw error;
    // The setting to change, not a stack: nothing is wrong with the gateway.
    process.stderr.write(`voxgate: failed to start: ${clash}\n`);
    await undoOnFailedStart?.();
    process.exit(1);
  }
  undoOnFailedStart = null;
  await logStartupSummary(gateway, config, file?.path ?? kept?.path ?? null);
  let stopping = false;
  // SIGTERM (a deploy) and the operator's drain: no new work, running calls go on until they
  // end or VOXGATE_DRAIN_TIMEOUT, then the rest is hung up with records and callbacks; their
  // peers get VOXGATE_SHUTDOWN_GRACE to answer the BYEs, so a vanished peer cannot hold the exit.
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (signal !== 'SIGINT') {
      gateway.app.log.info({ signal, deadlineS: config.drainTimeout }, 'draining');
      await gateway.drain(config.drainTimeout * 1000);
    }
    gateway.app.log.info({ signal }, 'shutting down');
    await gateway.close();
    // In memory the account ends with the process, and so does the file that names it.
    if (file && inMemory) await file.remove();
    process.exit(0);
  };
  const stopOn = (signal: string) =>
    void stop(signal).catch((error: unknown) => {
      gateway.app.log.error({ err: error, signal }, 'shutting down failed');
      process.exit(1);
    });
  process.once('SIGINT', () => stopOn('SIGINT'));
  process.once('SIGTERM', () => stopOn('SIGTERM'));
  requestDrain = () => stopOn('operator drain');
  // SIP message tracing, switched at run time: `kill -USR2 <pid>` turns it on, again off.
  process.on('SIGUSR2', () => {
    gateway.sip.setTrace(!gateway.sip.tracing);
    gateway.app.log.info({ tracing: gateway.sip.tracing }, 'SIP tracing switched');
  });
}

/** Whether this start adopted main-account.env, or the store's main account passed it over. */
function logKeptCredentials(
  log: { info(o: object, m: string): void; warn(o: object, m: string): void },
  account: MainAccount,
): void {
  const { kept } = account;
  if (kept?.outcome === 'restored')
    log.info(
      { authId: kept.authId, path: kept.path },
      'the store lacked the main account of its credentials file (an earlier start failed): stored it from the file',
    );
  else if (kept?.outcome === 'passed-over')
    log.warn(
      { path: kept.path, file: kept.authId, store: account.authId },
      "the credentials file names another main account than the store: the store's is used",
    );
}

main().catch(async (error: unknown) => {
  await undoOnFailedStart?.().catch(() => undefined);
  // A setting only the start can judge (VOXGATE_SECRET_KEY missing with Redis).
  if (error instanceof ConfigError) {
    process.stderr.write(`voxgate: configuration error: ${error.message}\n`);
    process.exit(2);
  }
  // What the operator can put right (the credentials file), without a stack.
  if (error instanceof CredentialsFileError) {
    process.stderr.write(`voxgate: failed to start: ${error.message}\n`);
    process.exit(1);
  }
  if (error instanceof StoreUnavailable) {
    process.stderr.write(
      `voxgate: failed to start: the state store is unavailable: ${error.detail}\n`,
    );
    process.exit(1);
  }
  process.stderr.write(`voxgate: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
