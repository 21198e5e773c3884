import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { TypedApp } from './api/api-context.js';
import { chatAppWebhookRoutes } from './api/routes/chatapp-webhook.js';
import { mm7Routes } from './api/routes/mm7-endpoint.js';
import {
  BullMqRetryQueue,
  TimerRetryQueue,
  type CallbackJob,
  type SigningKeys,
} from './callbacks/index.js';
import type { Config } from './config/config.js';
import type { Clock } from './core/clock.js';
import type { OutboundGuard } from './core/outbound-guard.js';
import type { Scheduler } from './core/scheduler.js';
import type { AccountLimiter } from './limits/account-limiter.js';
import { NO_CARRIERS } from './messaging/carrier-network.js';
import type { ChatAppTemplates } from './messaging/chatapp/chatapp-templates.js';
import { ChatAppWebhooks } from './messaging/chatapp/chatapp-webhooks.js';
import type { GraphClient } from './messaging/chatapp/graph-client.js';
import type { SendJob } from './messaging/message-pipeline.js';
import { MessagingService } from './messaging/messaging-service.js';
import { DiskMediaStore, MemoryMediaStore } from './messaging/mms/media-store.js';
import { Mm7Inbound } from './messaging/mms/mm7-inbound.js';
import { SmsCarriers } from './messaging/sms-carriers.js';
import type { State } from './state/state.js';

/** What messaging takes from the rest of the gateway. */
export interface MessagingDependencies {
  state: State;
  keys: SigningKeys;
  graph: GraphClient;
  guard: OutboundGuard;
  scheduler: Scheduler;
  log: {
    info(fields: Record<string, unknown>, message: string): void;
    warn(fields: Record<string, unknown>, message: string): void;
    error(fields: Record<string, unknown>, message: string): void;
  };
  registry: Registry;
  limits: AccountLimiter;
  /** The tenant whose outbox is taken up again at start. */
  mainAccount: string;
}

/**
 * Part of the composition root (app.ts): which queues, carriers, media store and journal
 * messaging runs on, by the configuration. Durable BullMQ queues on Redis, timers on the
 * embedded store; the media store and the journal under the data directory when there is one.
 */
export function composeMessaging(config: Config, deps: MessagingDependencies): MessagingService {
  return new MessagingService({
    state: deps.state,
    keys: deps.keys,
    sendQueue: config.redisUrl
      ? new BullMqRetryQueue<SendJob>({
          redisUrl: config.redisUrl,
          queueName: 'voxgate-messages',
          concurrency: 1000,
          // A send job finds what an earlier run of it did (MessagePipeline.dispatch): one that
          // failed for a store that was away runs again, for a minute, instead of being lost.
          rerun: { attempts: 30, retryDelayMs: 2000 },
          onError: (error) => deps.log.warn({ err: error }, 'message send queue'),
          waitForReplicas: config.redisWaitForReplicas,
        })
      : new TimerRetryQueue<SendJob>(deps.scheduler),
    callbackQueue: config.redisUrl
      ? new BullMqRetryQueue<CallbackJob>({
          redisUrl: config.redisUrl,
          queueName: 'voxgate-message-callbacks',
          onError: (error) => deps.log.warn({ err: error }, 'message callback retry queue'),
          waitForReplicas: config.redisWaitForReplicas,
        })
      : new TimerRetryQueue<CallbackJob>(deps.scheduler),
    mainAccount: deps.mainAccount,
    carriers: (handlers) =>
      config.smppCarriers.length === 0
        ? NO_CARRIERS
        : new SmsCarriers(config.smppCarriers, {
            ...handlers,
            scheduler: deps.scheduler,
            log: deps.log,
            partTimeoutMs: config.smsPartTimeoutMs,
          }),
    rateDeck: config.messageRateDeck,
    smartEncoding: config.smsSmartEncoding,
    graph: deps.graph,
    chatAppRetryMs: config.chatAppRetryMs,
    mediaStore: config.dataDir
      ? new DiskMediaStore(join(config.dataDir, 'media'))
      : new MemoryMediaStore(),
    journalDir: config.dataDir ? join(config.dataDir, 'journal') : null,
    mm7: config.mm7,
    guard: deps.guard,
    scheduler: deps.scheduler,
    log: deps.log,
    registry: deps.registry,
    limits: deps.limits,
  });
}

/** What the carriers' and chat-app upstream's inbound webhooks take from the gateway. */
export interface MessagingRoutesDependencies {
  state: State;
  templates: ChatAppTemplates;
  graph: GraphClient;
  clock: Clock;
  /** The URL a message's media is served at. */
  mediaUrl(authId: string, uuid: string, mediaId: string): string;
}

/**
 * Part of the composition root (app.ts): the routes carriers and the chat-app upstream call
 * in on (chat-app webhooks, MM7), delivering into messaging.
 */
export async function messagingRoutes(
  app: TypedApp,
  config: Config,
  messaging: MessagingService,
  deps: MessagingRoutesDependencies,
): Promise<void> {
  const { state, graph, clock, mediaUrl } = deps;
  await chatAppWebhookRoutes(
    app,
    new ChatAppWebhooks({
      state,
      templates: deps.templates,
      onStatus: (status) => messaging.pipeline.chatAppStatus(status),
      onInbound: (message) => messaging.inbound.receive(message),
      graph,
      media: { state, store: messaging.mms.store, mediaUrl },
      log: app.log,
    }),
  );
  await mm7Routes(
    app,
    new Mm7Inbound({
      state,
      store: messaging.mms.store,
      pipeline: messaging.pipeline,
      inbound: messaging.inbound,
      mm7: config.mm7,
      clock,
      mediaUrl,
      log: app.log,
    }),
  );
}
