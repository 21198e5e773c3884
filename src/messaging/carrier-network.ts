import type { InboundSms } from './inbound-messages.js';
import type { BindStatus } from './message-metrics.js';
import type { DeliveryReceipt } from './sms/delivery-receipt.js';
import type { SmsPlan } from './sms/sms-plan.js';

/** One outbound SMS as a carrier link sends it. */
export interface OutboundSms {
  /** Digits of a number or short code, or an alphanumeric sender id. */
  source: string;
  /** E.164 digits. */
  destination: string;
  plan: SmsPlan;
  /** Scheduler time (ms) after which a part not yet sent is given up as expired. */
  deadline: number;
  /** Each part's carrier id, as soon as the carrier gave it (a receipt may follow at once). */
  onPartAccepted(part: number, carrierId: string): void;
}

/** What the carrier answered for each submit made for a message. */
export type PartOutcome =
  | { ok: true; messageId: string }
  | { ok: false; commandStatus: number | null; expired: boolean; error: string };

export interface OutboundCarrier {
  readonly name: string;
  send(message: OutboundSms): Promise<PartOutcome[]>;
}

/** The carriers messages can go to: the messaging pipeline knows them only through this. */
export interface CarrierNetwork {
  /** The carrier that takes a destination (E.164 digits), or null when no route does. */
  route(destination: string): OutboundCarrier | null;
}

/** Where a carrier set hands what carriers deliver. */
export interface CarrierHandlers {
  /** Resolves once the receipt is recorded: the carrier may be acknowledged then. */
  onReceipt(carrier: string, receipt: DeliveryReceipt): Promise<void>;
  /** Resolves once the message is recorded. */
  onInbound(sms: InboundSms): Promise<void>;
}

/** The configured carriers, started and closed with the gateway. */
export interface CarrierSet extends CarrierNetwork {
  start(): void;
  close(): Promise<void>;
  status(): BindStatus[];
}

/** No carrier configured: every message fails with 90, no route available. */
export const NO_CARRIERS: CarrierSet = {
  route: () => null,
  start: () => undefined,
  close: async () => undefined,
  status: () => [],
};
