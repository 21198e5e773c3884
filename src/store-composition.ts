import { ConfigError, type Config } from './config/config.js';
import type { Scheduler } from './core/scheduler.js';
import type { DocumentStore } from './state/document-store.js';
import { EmbeddedStore } from './state/embedded-store.js';
import { RedisStore } from './state/redis-store.js';
import { SecretBox, parseSecretKey } from './state/secret-box.js';
import { loadSecretKeyFile, type SecretKeyFile } from './state/secret-key-file.js';
import { createState, type State } from './state/state.js';
import { waitForStore } from './state/store-readiness.js';

/** The gateway's state: Redis when configured, else the embedded store, ready for writes. */
export interface OpenedStore {
  store: DocumentStore;
  redisStore: RedisStore | null;
  embeddedStore: EmbeddedStore | null;
  state: State;
  /** The key file the embedded store's secrets are sealed with, when one was used. */
  keyFile: SecretKeyFile | null;
}

/**
 * Part of the composition root (app.ts): opens the store named by the configuration, seals
 * its secrets with the configured key, and waits for it to take writes
 * (VOXGATE_STORE_START_WAIT). `onError` hears connection and log-write errors (the logger
 * comes later, with the HTTP app).
 */
export async function openStore(
  config: Config,
  scheduler: Scheduler,
  onError: (error: Error, what: 'redis' | 'log') => void,
): Promise<OpenedStore> {
  const { secrets, keyFile } = await storedSecretsKey(config);
  const redisStore = config.redisUrl
    ? RedisStore.connect(config.redisUrl, {
        waitForReplicas: config.redisWaitForReplicas,
        onError: (error) => onError(error, 'redis'),
      })
    : null;
  const embeddedStore = redisStore
    ? null
    : new EmbeddedStore(config.dataDir, { onError: (error) => onError(error, 'log') });
  const store: DocumentStore = redisStore ?? embeddedStore!;
  const state = createState(store, secrets);
  await waitForStore(store, {
    waitMs: config.storeStartWait * 1000,
    scheduler,
    onWait: (error, waitedMs) =>
      process.emitWarning(
        `the state store does not take writes yet (${error.detail}); waited ${Math.round(waitedMs / 1000)} s of ${config.storeStartWait} s`,
      ),
  });
  return { store, redisStore, embeddedStore, state, keyFile };
}

/**
 * The key the stored secrets are sealed with (README, Secrets at rest): VOXGATE_SECRET_KEY;
 * without it, the embedded store's key file in the data directory, or a key of the process's
 * own in memory. Nodes sharing Redis need one key that Redis does not hold: there it must be set.
 */
async function storedSecretsKey(
  config: Config,
): Promise<{ secrets: SecretBox; keyFile: SecretKeyFile | null }> {
  if (config.secretKey) {
    return { secrets: new SecretBox(parseSecretKey(config.secretKey)), keyFile: null };
  }
  if (config.redisUrl) {
    throw new ConfigError(
      'VOXGATE_SECRET_KEY',
      'must be set with VOXGATE_REDIS_URL: every node sharing Redis encrypts and decrypts the ' +
        'stored secrets with this one key, which Redis itself must not hold (make one with ' +
        '`openssl rand -hex 32`)',
      '',
    );
  }
  if (config.dataDir === null) return { secrets: SecretBox.random(), keyFile: null };
  const keyFile = await loadSecretKeyFile(config.dataDir);
  return { secrets: new SecretBox(keyFile.key), keyFile };
}
