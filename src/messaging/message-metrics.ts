import { Counter, Gauge, type Registry } from 'prom-client';
import type { MessageRecord } from '../state/records.js';

/** What a carrier bind reports for /metrics. */
export interface BindStatus {
  carrier: string;
  bind: number;
  state: string;
  inFlight: number;
  window: number;
  throttleEvents: number;
  idleWithWorkMs: number;
}

export interface MessageMetrics {
  accepted(message: MessageRecord): void;
  sent(message: MessageRecord): void;
  /** A message reached a final state (delivered, undelivered, failed; inbound delivered...). */
  finished(message: MessageRecord): void;
  received(message: MessageRecord): void;
  receipt(matched: boolean): void;
  /** Reads the binds' state at each scrape. */
  watchBinds(read: () => BindStatus[]): void;
}

const BIND_STATES = ['idle', 'connecting', 'binding', 'bound', 'closed'];

/** The messaging series of /metrics (issue: messages by direction, type and final state...). */
export function prometheusMessageMetrics(registry: Registry): MessageMetrics {
  const messages = new Counter({
    name: 'voxgate_messages_total',
    help: 'Messages by direction, type and state reached (queued, sent, delivered, ...)',
    labelNames: ['direction', 'type', 'state'],
    registers: [registry],
  });
  const parts = new Counter({
    name: 'voxgate_message_parts_total',
    help: 'SMS parts (units) handed to carriers',
    registers: [registry],
  });
  const receipts = new Counter({
    name: 'voxgate_message_receipts_total',
    help: 'Delivery receipts, matched to a sent message or not',
    labelNames: ['matched'],
    registers: [registry],
  });
  let readBinds: () => BindStatus[] = () => [];
  new Gauge({
    name: 'voxgate_smpp_window_in_use',
    help: 'Unanswered submit_sm per SMPP bind',
    labelNames: ['carrier', 'bind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const b of readBinds())
        this.set({ carrier: b.carrier, bind: String(b.bind) }, b.inFlight);
    },
  });
  new Gauge({
    name: 'voxgate_smpp_window_size',
    help: 'The window (most unanswered submit_sm) of each SMPP bind',
    labelNames: ['carrier', 'bind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const b of readBinds()) this.set({ carrier: b.carrier, bind: String(b.bind) }, b.window);
    },
  });
  new Gauge({
    name: 'voxgate_smpp_throttle_events',
    help: 'ESME_RTHROTTLED and ESME_RMSGQFUL answers per SMPP bind since start',
    labelNames: ['carrier', 'bind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const b of readBinds())
        this.set({ carrier: b.carrier, bind: String(b.bind) }, b.throttleEvents);
    },
  });
  new Gauge({
    name: 'voxgate_smpp_idle_with_work_seconds',
    help: 'How long submits have waited on each SMPP bind while it sent nothing (0: none waits); a bound bind that grows this is stuck',
    labelNames: ['carrier', 'bind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const b of readBinds())
        this.set({ carrier: b.carrier, bind: String(b.bind) }, b.idleWithWorkMs / 1000);
    },
  });
  new Gauge({
    name: 'voxgate_smpp_bind_state',
    help: 'SMPP bind state: 1 for the state each bind is in',
    labelNames: ['carrier', 'bind', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const b of readBinds())
        for (const state of BIND_STATES)
          this.set({ carrier: b.carrier, bind: String(b.bind), state }, b.state === state ? 1 : 0);
    },
  });
  const count = (m: MessageRecord) =>
    messages.inc({ direction: m.message_direction, type: m.message_type, state: m.message_state });
  return {
    accepted: count,
    sent: (m) => {
      count(m);
      if (m.message_state === 'sent') parts.inc(m.units);
    },
    finished: count,
    received: count,
    receipt: (matched) => receipts.inc({ matched: String(matched) }),
    watchBinds: (read) => (readBinds = read),
  };
}
