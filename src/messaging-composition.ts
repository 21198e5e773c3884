import { join } from 'node:path';
import type { Registry } from 'prom-client';
import {
  BullMqRetryQueue,
  TimerRetryQueue,
  type CallbackJob,
  type SigningKeys,
} from './callbacks/index.js';
import type { Config } from './config/config.js';
import type { OutboundGuard } from './core/outbound-guard.js';
import type { Scheduler } from './core/scheduler.js';
import type { AccountLimiter } from './limits/account-limiter.js';
import { NO_CARRIERS } from './messaging/carrier-network.js';
import type { GraphClient } from './messaging/chatapp/graph-client.js';
import type { SendJob } from './messaging/message-pipeline.js';
import { MessagingService } from './messaging/messaging-service.js';
import { DiskMediaStore, MemoryMediaStore } from './messaging/mms/media-store.js';
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
