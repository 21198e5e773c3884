import type { AccountLimiter } from '../limits/account-limiter.js';
import type { Registry } from 'prom-client';
import type { CallbackJob, RetryQueue, SigningKeys } from '../callbacks/index.js';
import { CallbackDelivery } from '../callbacks/index.js';
import type { OutboundGuard } from '../core/outbound-guard.js';
import type { Scheduler } from '../core/scheduler.js';
import type { State } from '../state/state.js';
import type { Mm7Settings } from '../config/config.js';
import { ChatAppChannel } from './chatapp/chatapp-channel.js';
import type { MediaStore } from './mms/media-store.js';
import { Mm7Carrier } from './mms/mm7-carrier.js';
import { MmsChannel } from './mms/mms-channel.js';
import type { GraphClient } from './chatapp/graph-client.js';
import { PeriodicSweep } from '../core/periodic-sweep.js';
import { InboundMessages } from './inbound-messages.js';
import { removeExpiredMessages } from './message-retention.js';
import { prometheusMessageMetrics } from './message-metrics.js';
import { MessagePipeline, type MessageLog, type SendJob } from './message-pipeline.js';
import { MessageRateDeck } from './message-rate-deck.js';
import type { CarrierHandlers, CarrierSet } from './carrier-network.js';

export interface MessagingServiceOptions {
  state: State;
  keys: SigningKeys;
  /** Where send jobs wait: durable on Redis (BullMQ); timers with the embedded store. */
  sendQueue: RetryQueue<SendJob>;
  /** Where status and message_url callbacks wait for their retries. */
  callbackQueue: RetryQueue<CallbackJob>;
  mainAccount: string;
  /** Builds the carriers, handing what they deliver to the handlers given. */
  carriers(handlers: CarrierHandlers): CarrierSet;
  rateDeck: string;
  smartEncoding: boolean;
  /** The chat-app upstream; null refuses chat-app sends. */
  graph: GraphClient | null;
  /** How long a chat-app message upstream could not take waits before it is tried again. */
  chatAppRetryMs: number;
  /** Where MMS media are kept. */
  mediaStore: MediaStore;
  /** The MMSC; null refuses MMS. */
  mm7: Mm7Settings | null;
  /** What message callbacks and MMS media URLs go through. */
  guard: OutboundGuard;
  scheduler: Scheduler;
  log: MessageLog & { error?(fields: Record<string, unknown>, message: string): void };
  registry: Registry;
  /** The account limits (messages per second); none: no limits. */
  limits?: AccountLimiter;
  /** Where what the store owes messaging is journaled (see MessagePipeline). */
  journalDir?: string | null;
}

/** How often messages past their retention are swept. */
const RETENTION_SWEEP_EVERY_MS = 60 * 60 * 1000;

/** The largest message_url answer read for `<Message>` replies. */
const REPLY_MAX_BYTES = 64 * 1024;

/**
 * Messaging as the rest of the gateway sees it: the pipeline that sends, the inbound side, the
 * carriers, and their own callback delivery (message retries, answers read for replies).
 */
export class MessagingService {
  readonly pipeline: MessagePipeline;
  readonly inbound: InboundMessages;
  readonly carriers: CarrierSet;
  readonly mms: MmsChannel;
  private readonly retention: PeriodicSweep;
  private readonly callbacks: CallbackDelivery;

  constructor(options: MessagingServiceOptions) {
    const { log, scheduler, state } = options;
    const metrics = prometheusMessageMetrics(options.registry);
    this.mms = new MmsChannel(
      state,
      options.mediaStore,
      options.mm7 ? new Mm7Carrier(options.mm7) : null,
      options.guard,
    );
    this.retention = new PeriodicSweep(
      (now) => removeExpiredMessages(state, options.mediaStore, options.mainAccount, now),
      scheduler,
      RETENTION_SWEEP_EVERY_MS,
      (error) => log.warn({ err: error.message }, 'sweeping expired messages failed'),
    );
    const report = (what: string) => (error: Error) =>
      log.warn({ err: error.message }, `inbound message ${what} not recorded`);
    this.callbacks = new CallbackDelivery({
      keys: options.keys,
      queue: options.callbackQueue,
      log,
      readBodyBytes: REPLY_MAX_BYTES,
      guard: options.guard,
      delegate: {
        onDelivered: (r) => void this.inbound.delivered(r).catch(report('delivery')),
        onGiveUp: (r) => void this.inbound.gaveUp(r).catch(report('failure')),
      },
    });
    this.carriers = options.carriers({
      onReceipt: (carrier, receipt) => this.pipeline.receipt(carrier, receipt),
      onInbound: (sms) => this.inbound.receive(sms),
    });
    metrics.watchBinds(() => this.carriers.status());
    this.pipeline = new MessagePipeline({
      state,
      callbacks: this.callbacks,
      queue: options.sendQueue,
      mainAccount: options.mainAccount,
      carriers: this.carriers,
      deck: MessageRateDeck.load(options.rateDeck),
      scheduler,
      log,
      metrics,
      smartEncoding: options.smartEncoding,
      chatApp: options.graph
        ? new ChatAppChannel(state, options.graph, options.chatAppRetryMs)
        : null,
      mms: this.mms,
      ...(options.limits ? { limits: options.limits } : {}),
      journalDir: options.journalDir ?? null,
    });
    this.inbound = new InboundMessages({
      state,
      callbacks: this.callbacks,
      pipeline: this.pipeline,
      scheduler,
      log,
      metrics,
    });
  }

  async start(): Promise<void> {
    this.carriers.start();
    await this.pipeline.start();
    this.retention.start();
  }

  async close(): Promise<void> {
    // Sends waiting for a carrier end when it closes; the queue then closes with nothing running.
    this.retention.stop();
    this.pipeline.stopSending();
    await this.carriers.close();
    await this.pipeline.close();
    await this.callbacks.close();
  }
}
