import type { DestinationStream } from 'pino';
import { Registry } from 'prom-client';
import { Authenticator } from './api/auth.js';
import { UriBuilder } from './api/envelope.js';
import { operationalRoutes } from './api/operational-routes.js';
import type { TypedApp } from './api/api-context.js';
import { buildHttpApp } from './api/http-app.js';
import { operatorRoutes } from './api/operator-routes.js';
import { AccountLimiter } from './limits/account-limiter.js';
import { MemoryLimitCounters, RedisLimitCounters } from './limits/limit-counters.js';
import { restApi } from './api/rest-api.js';
import { composeCluster, composeVoice } from './voice-composition.js';
import {
  BullMqRetryQueue,
  CallbackDelivery,
  TimerRetryQueue,
  type CallbackJob,
  type SigningKeys,
} from './callbacks/index.js';
import { httpWorkerMetrics } from './callbacks/http-worker-metrics.js';
import { recentSigningKeys } from './callbacks/recent-signing-keys.js';
import { CallEngine } from './call/call-engine.js';
import { DRAIN_RETRY_AFTER_S } from './call/call-engine.js';
import { RecordRetention } from './call/record-retention.js';
import { removeExpiredRegistrations } from './call/registrar-directory.js';
import { MediaService } from './call/media-service.js';
import { SipService } from './call/sip-service.js';
import type { Config } from './config/config.js';
import { systemClock, type Clock } from './core/clock.js';
import {
  guardFromSettings,
  redactedUrl,
  type OutboundGuard,
  type OutboundGuardSettings,
} from './core/outbound-guard.js';
import { ChatAppTemplates } from './messaging/chatapp/chatapp-templates.js';
import { GraphClient } from './messaging/chatapp/graph-client.js';
import { composeMessaging, messagingRoutes } from './messaging-composition.js';
import { openStore } from './store-composition.js';
import type { MessagingService } from './messaging/messaging-service.js';
import { systemScheduler, type Scheduler } from './core/scheduler.js';
import { ensureMainAccount, restoreMainAccount, type MainAccount } from './state/main-account.js';
import type { KeptCredentials } from './state/main-account.js';
import { sealLegacySecrets, type State } from './state/state.js';
import { TollfreeVerifications } from './tollfree/verifications.js';
import { PeriodicSweep } from './core/periodic-sweep.js';

export interface GatewayOptions {
  clock?: Clock;
  /** Runs the SIP timers; the system's by default. */
  scheduler?: Scheduler;
  /** Where logs go (tests capture them); stdout by default. */
  logStream?: DestinationStream;
  /**
   * Given a main account generated on this start, before it is stored (see
   * ensureMainAccount); the process entry writes it to a file. Nothing is done without it.
   */
  keepGeneratedCredentials?: (account: { authId: string; authToken: string }) => Promise<void>;
  /** The credentials an earlier start wrote (main-account.env): adopted, never replaced. */
  keptCredentials?: KeptCredentials | null;
  /** The operator asked this node to drain (POST /operator/v1/Node/Drain/): as SIGTERM. */
  onDrainRequested?: () => void;
  /**
   * Host names the outbound guard answers from this table instead of DNS, in every thread
   * (tests: a name that resolves to an address the policy refuses).
   */
  outboundHosts?: Record<string, string[]>;
}

export interface Gateway {
  app: TypedApp;
  state: State;
  mainAccount: MainAccount;
  /** Signed webhook delivery; retries are durable on Redis. */
  callbacks: CallbackDelivery;
  /** The SIP stack, its listeners (after listen) and the registrar. */
  sip: SipService;
  /** The media plane; its worker threads start with the first session. */
  media: MediaService;
  /** The calls of this node. */
  calls: CallEngine;
  /** Messages: sending, receipts, inbound, the SMS carriers. */
  messaging: MessagingService;
  /** Toll-free verification requests as they move through review. */
  tollfree: TollfreeVerifications;
  /** What every tenant-supplied URL is fetched or connected to through. */
  outbound: OutboundGuard;
  /** Starts every listener; /health answers 200 after this resolves. */
  listen(): Promise<void>;
  /**
   * Takes no new work (503 to INVITE and OPTIONS, outbound calls placed on other nodes) and
   * resolves once this node runs no call, or at the deadline; close() then ends what is left.
   */
  drain(deadlineMs: number): Promise<void>;
  close(): Promise<void>;
}

/** How often requests left in UPDATE_REQUIRED for six days are looked for. */
const TOLLFREE_SWEEP_EVERY_MS = 10 * 60 * 1000;

/** A part of the gateway still stopping after this long is named in a warning. */
const SLOW_CLOSE_MS = 5000;

/** Secrets that may never reach a log line. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.body.password',
  'req.body.auth_token',
  'req.body.sip_auth_password',
  'req.body.access_token',
  'req.body.app_secret',
  'req.body.verify_token',
  'res.headers["set-cookie"]',
];

/** The composition root: the one place that picks concrete implementations. */
export async function buildGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const clock = options.clock ?? systemClock;
  // The logger comes with the HTTP app, after the store: a write that fails before it exists
  // is a process warning.
  let log: { warn(object: object, message: string): void } | null = null;
  const { store, redisStore, embeddedStore, state, keyFile } = await openStore(
    config,
    options.scheduler ?? systemScheduler,
    (error, what) => {
      if (what === 'redis') {
        if (log) log.warn({ err: error }, 'Redis connection; reconnecting');
        else process.emitWarning(`Redis: ${error.message}`);
      } else if (log) log.warn({ err: error }, 'the state log could not be written; retrying');
      else process.emitWarning(`state log: ${error.message}`);
    },
  );
  const mainAccount = await ensureMainAccount(
    state,
    clock,
    config.authId && config.authToken
      ? { authId: config.authId, authToken: config.authToken }
      : null,
    options.keepGeneratedCredentials,
    options.keptCredentials,
  );

  const app = await buildHttpApp({
    logLevel: config.logLevel,
    redact: REDACT,
    logStream: options.logStream,
  });
  log = app.log;
  if (keyFile?.created) {
    app.log.info({ path: keyFile.path }, 'generated the key that encrypts stored secrets');
  }
  const resealed = await sealLegacySecrets(state, mainAccount.authId);
  if (resealed > 0) {
    // The log still holds the old lines with the secrets in clear until it is rewritten.
    await embeddedStore?.compact();
    app.log.info({ records: resealed }, 'encrypted the secrets an older version stored in clear');
  }

  let listening = false;
  let draining = false;
  const registry = new Registry();
  const stopHttpWorkerLog = httpWorkerMetrics(registry, app.log);
  const scheduler = options.scheduler ?? systemScheduler;
  const keys = recentSigningKeys(signingKeys(state), scheduler);
  const sip = new SipService({
    config,
    state,
    scheduler,
    mainToken: mainAccount.authToken,
    log: app.log,
    registry,
  });
  // The ports are known once the listeners are up (0 asks for any free one), and stay.
  let listeningPorts: number[] | null = null;
  const outboundSettings = (): OutboundGuardSettings => ({
    policy: {
      profile: config.outboundProfile,
      get ownPorts() {
        if (!listening) return ownPorts(config, app, sip);
        return (listeningPorts ??= ownPorts(config, app, sip));
      },
    },
    ...(options.outboundHosts ? { hosts: options.outboundHosts } : {}),
  });
  const outbound = guardFromSettings(outboundSettings(), (refused, url) =>
    app.log.warn(
      {
        rule: refused.rule,
        host: refused.host,
        address: refused.refusal.address,
        range: refused.refusal.range,
        url: redactedUrl(url),
      },
      'outbound request refused',
    ),
  );
  const callbacks = new CallbackDelivery({
    guard: outbound,
    keys,
    queue: config.redisUrl
      ? new BullMqRetryQueue<CallbackJob>({
          redisUrl: config.redisUrl,
          onError: (error) => app.log.warn({ err: error }, 'callback retry queue'),
          waitForReplicas: config.redisWaitForReplicas,
        })
      : new TimerRetryQueue<CallbackJob>(scheduler),
    log: app.log,
  });

  const limits = new AccountLimiter({
    state,
    counters: redisStore ? new RedisLimitCounters(redisStore.client) : new MemoryLimitCounters(),
    defaults: config.limits,
    scheduler,
    registry,
  });
  const voiceDeps = {
    state,
    redisStore,
    sip,
    callbacks,
    limits,
    registry,
    scheduler,
    log: app.log,
    tenant: mainAccount.authId,
    outbound: outboundSettings,
  };
  const voice = composeVoice(config, voiceDeps);
  const { media, calls, probes, carriers, callRecords, recordings } = voice;

  const graph = new GraphClient({
    baseUrl: config.chatAppGraphUrl,
    timeoutMs: config.chatAppTimeoutMs,
  });
  const messaging = composeMessaging(config, {
    state,
    mainAccount: mainAccount.authId,
    keys,
    graph,
    guard: outbound,
    scheduler,
    log: app.log,
    registry,
    limits,
  });
  await messaging.start();

  const retention = new RecordRetention(
    state,
    mainAccount.authId,
    scheduler,
    (error) => app.log.warn({ err: error }, 'sweeping expired records failed'),
    [
      ...recordings.expired(mainAccount.authId),
      (now) => removeExpiredRegistrations(state, mainAccount.authId, now),
    ],
  );
  const cluster = composeCluster(config, voice, {
    ...voiceDeps,
    mainToken: mainAccount.authToken,
    binds: () =>
      messaging.carriers.status().map(({ carrier, bind, state }) => ({ carrier, bind, state })),
    addresses: () => ({
      sip: `${config.publicHost}:${listening ? sip.addresses.udp.port : config.sipPort}`,
      http: advertisedHttp(config, app),
    }),
    restore: () =>
      restoreMainAccount(state, clock, mainAccount, !!(config.authId && config.authToken)),
  });
  operationalRoutes(app, {
    isReady: () => listening,
    ...(redisStore ? { storeAnswers: () => redisStore.ping() } : {}),
    binds: () => messaging.carriers.status(),
    registry,
    node: () => ({
      id: sip.node,
      state: cluster?.draining || draining ? 'draining' : 'active',
      peers: cluster ? cluster.peers() : Promise.resolve([]),
    }),
  });
  const chatAppTemplates = new ChatAppTemplates({
    state,
    graph,
    callbacks,
    clock,
  });
  const uris = new UriBuilder(config.publicUrl);
  const mediaUrl = (authId: string, uuid: string, mediaId: string) =>
    uris.account(authId, 'Message', uuid, 'Media', mediaId);
  await messagingRoutes(app, config, messaging, {
    state,
    templates: chatAppTemplates,
    graph,
    clock,
    mediaUrl,
  });
  const tollfree = new TollfreeVerifications({ state, callbacks, clock });
  const tollfreeExpiry = new PeriodicSweep(
    () => tollfree.expireOverdue(mainAccount.authId, clock.now()),
    scheduler,
    TOLLFREE_SWEEP_EVERY_MS,
    (error) => app.log.warn({ err: error }, 'rejecting overdue toll-free verifications failed'),
  );
  const context = {
    state,
    uris,
    authenticator: new Authenticator(state, { clock }),
    clock,
    sipDomain: config.publicHost,
    calls,
    control: cluster?.control ?? voice.local,
    conferences: cluster?.conferences ?? voice.localConferences,
    launcher: cluster ?? calls,
    messages: messaging.pipeline,
    chatAppTemplates,
    mediaStore: messaging.mms.store,
    tollfree,
    outbound,
    inboundCarriers: config.inboundCarriers,
    recordings: {
      collection: recordings.collection,
      store: recordings.store,
      ...(cluster && {
        peers: {
          node: sip.node,
          baseUrl: async (node: string) => {
            const peer = (await cluster.registry.alive()).find((p) => p.id === node);
            return peer ? `http://${peer.http}` : null;
          },
        },
      }),
    },
  };
  if (config.operatorToken)
    await operatorRoutes(app, {
      state,
      tollfree,
      limits,
      tenant: mainAccount.authId,
      token: config.operatorToken,
      ...(options.onDrainRequested
        ? {
            drain: () => {
              options.onDrainRequested!();
              return sip.node;
            },
          }
        : {}),
    });
  await restApi(app, context, { rateLimit: config.rateLimit, redis: redisStore?.client ?? null });
  await app.ready();

  return {
    app,
    state,
    mainAccount,
    callbacks,
    sip,
    media,
    calls,
    messaging,
    tollfree,
    outbound,
    listen: async () => {
      await sip.listen();
      await app.listen({ host: config.httpHost, port: config.httpPort });
      retention.start();
      tollfreeExpiry.start();
      probes.start();
      carriers.start();
      listening = true;
      await cluster?.start();
    },
    drain: async (deadlineMs) => {
      draining = true;
      calls.drain();
      sip.drain(DRAIN_RETRY_AFTER_S);
      await cluster?.drain();
      const deadline = new Promise<'deadline'>((resolve) =>
        scheduler.after(deadlineMs, () => resolve('deadline')),
      );
      if ((await Promise.race([calls.idle(), deadline])) === 'deadline')
        app.log.warn({ calls: calls.liveCount }, 'drain deadline reached: hanging up what is left');
    },
    close: async () => {
      listening = false;
      retention.stop();
      tollfreeExpiry.stop();
      probes.stop();
      // A part that takes long to stop is named in the log, so a stuck shutdown says where.
      const part = async (name: string, stop: () => Promise<void> | undefined) => {
        const slow = scheduler.after(SLOW_CLOSE_MS, () =>
          app.log.warn({ part: name, ms: SLOW_CLOSE_MS }, 'closing is taking long'),
        );
        try {
          await stop();
        } finally {
          slow.cancel();
        }
      };
      await part('calls', () => calls.close(config.shutdownGrace * 1000));
      await part('call records', () => callRecords.close());
      // Before SIP closes: each carrier registration is removed with a REGISTER, Expires 0.
      await part('carriers', () => carriers.stop());
      await part('cluster', () => cluster?.stop());
      await part('messaging', () => messaging.close());
      await part('sip', () => sip.close());
      await part('media', () => media.shutdown());
      await part('callbacks', () => callbacks.close());
      stopHttpWorkerLog();
      await part('http', () => app.close());
      await part('store', () => store.close());
    },
  };
}

/**
 * Where peers and operators reach this node's REST API: the address it listens on, or its
 * public host when it listens on every address (0.0.0.0 or ::, as in a container); the port
 * bound once listening (a configured 0 is any free one).
 */
function advertisedHttp(config: Config, app: TypedApp): string {
  const everywhere = config.httpHost === '0.0.0.0' || config.httpHost === '::';
  return `${everywhere ? config.publicHost : config.httpHost}:${boundHttpPort(app) ?? config.httpPort}`;
}

/** The port the REST API listens on; null before it listens. */
function boundHttpPort(app: TypedApp): number | null {
  const bound = app.server.address();
  return bound !== null && typeof bound === 'object' ? bound.port : null;
}

/**
 * The gateway's own listening TCP ports: those configured and, once listening, those bound
 * (a port of 0 is any free one). Tenant URLs may not point the gateway at itself.
 */
function ownPorts(config: Config, app: TypedApp, sip: SipService): number[] {
  const ports = new Set([config.httpPort, config.sipPort, config.sipWsPort]);
  if (config.sipTls) ports.add(config.sipTls.port);
  const http = boundHttpPort(app);
  if (http !== null) ports.add(http);
  try {
    const { tcp, ws, tls } = sip.addresses;
    ports.add(tcp.port).add(ws.port);
    if (tls) ports.add(tls.port);
  } catch {
    // Not listening yet: the configured ports are all there is.
  }
  ports.delete(0);
  return [...ports];
}

/** Webhooks are signed with the owning account's token and its main account's token. */
function signingKeys(state: State): SigningKeys {
  return {
    keysFor: async (accountId) => {
      const account = await state.accounts.findByUnique({ space: 'auth_id', value: accountId });
      if (!account) return null;
      const main =
        account.subaccount === null
          ? account
          : await state.accounts.get(account.account, account.account);
      if (!main) return null;
      return { accountToken: account.auth_token, mainToken: main.auth_token };
    },
  };
}
