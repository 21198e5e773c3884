import type { AddressRefusal } from '../core/address-policy.js';
import type { CallbackMethod, SigningTokens } from './signature.js';

/**
 * The messages between the main thread and the HTTP worker, which makes the gateway's requests
 * to client URLs (callbacks, answer documents, upstream APIs). Everything here is
 * structured-cloneable; both ways, messages travel in batches (MessageBatch).
 */

/** A request as it goes on the wire. */
export interface PlainRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** A callback to sign in the worker (signature headers with a fresh nonce, form or query). */
export interface CallbackToSign {
  url: string;
  method: CallbackMethod;
  params: Record<string, string>;
  tokens: SigningTokens;
}

/** One request for the worker to make. */
export interface ExchangeOrder {
  kind: 'exchange';
  id: number;
  request: PlainRequest | { sign: CallbackToSign };
  /**
   * The outbound guard every new connection is checked by (a number the main thread gave it),
   * or null for a URL the operator configured.
   */
  guard: number | null;
  timeoutMs: number;
  /** Read a body of at most this many bytes; otherwise the body is drained. */
  readBodyBytes?: number;
}

/** The main thread's verdict on a new connection's host (see PinQuestion). */
export interface PinAnswer {
  kind: 'pinned';
  id: number;
  verdict: PinVerdict;
}

export type PinVerdict =
  | { ok: true; address: string }
  | { ok: false; refused: RefusalFacts }
  | { ok: false; error: string; code?: string };

/** What the main thread needs to rebuild an OutboundRefused. */
export interface RefusalFacts {
  refusal: AddressRefusal;
  host: string;
  port: number;
}

/** A guard that is gone (collected): its connection pools are closed. */
export interface ForgetGuard {
  kind: 'forget';
  guard: number;
}

export type ToWorker = ExchangeOrder | PinAnswer | ForgetGuard;

/** What a request gave; a body comes back as bytes. */
export type ExchangeOutcome =
  | { ok: true; status: number; contentType: string; body: Uint8Array | null }
  /** No response: the reason, or the refusal of the guard that stopped the connection. */
  | { ok: false; error: string; refused?: RefusalFacts }
  /** A response whose body was larger than allowed; it was not read further. */
  | { ok: false; status: number; error: string };

export interface ExchangeDone {
  kind: 'done';
  id: number;
  outcome: ExchangeOutcome;
}

/**
 * The worker asks the main thread, which holds the guards (their resolvers and policies), to
 * check the host of a connection it is about to open and name the address to connect to.
 */
export interface PinQuestion {
  kind: 'pin';
  id: number;
  guard: number;
  /** scheme://host[:port]/ */
  origin: string;
}

export type FromWorker = ExchangeDone | PinQuestion;
