import type { PartOutcome } from '../carrier-network.js';

/** One MMS as a carrier adapter sends it: text and media as parts, in order. */
export interface OutboundMms {
  /** The message's uuid: the transaction id, and what a retried submit repeats. */
  id: string;
  /** A number (E.164 digits) or a short code. */
  source: string;
  destination: string;
  parts: { contentType: string; body: Buffer; fileName?: string }[];
  /** How long the carrier may keep trying to deliver it. */
  expirySeconds: number;
}

/**
 * The carrier side of MMS: an adapter per protocol (MM7 is the first). It submits one message
 * and resolves with the carrier's id for it, or its refusal; delivery reports and inbound MMS
 * come back through the adapter's own endpoint, under its `name`.
 */
export interface MmsCarrier {
  readonly name: string;
  submit(message: OutboundMms): Promise<PartOutcome>;
}

export function refused(error: string): PartOutcome {
  return { ok: false, commandStatus: null, expired: false, error };
}
