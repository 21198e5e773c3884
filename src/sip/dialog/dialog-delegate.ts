import type { SipRequest } from '../message/index.js';
import type { ServerTransaction } from '../transaction/transaction-layer.js';
import type { Destination } from '../transport/transport-layer.js';

/** Why a dialog ended. */
export type DialogEnd =
  /** A BYE was sent (local) or received (remote). */
  | { kind: 'bye'; by: 'local' | 'remote' }
  /** RFC 3261 13.3.1.4: our 2xx was never acknowledged; a BYE was sent. */
  | { kind: 'no-ack' }
  /** RFC 3261 12.2.1.2: a request in the dialog was answered 481 or 408 (or timed out). */
  | { kind: 'request-failed'; method: string; status: number }
  /** An early dialog whose INVITE got a final response on another dialog, or none. */
  | { kind: 'early-ended' }
  /** The dialog layer closed. */
  | { kind: 'shutdown' };

/** A re-INVITE or UPDATE that the owner answers (RFC 3264 offer/answer, RFC 3311). */
export interface SessionOffer {
  readonly method: 'INVITE' | 'UPDATE';
  readonly request: SipRequest;
  /** The offer; null for a re-INVITE without one, whose 2xx then carries our offer. */
  readonly sdp: string | null;
}

/** The owner's answer to a SessionOffer: an SDP answer (200) or a rejection (a 4xx-6xx). */
export type OfferReply =
  | { sdp: string; headers?: Iterable<readonly [string, string]> }
  | { status: number; reason?: string; headers?: Iterable<readonly [string, string]> };

/**
 * What a dialog tells its owner (the call layer). Every callback is optional; the defaults are
 * given on each. A callback that throws is answered 500 where a request is still unanswered.
 */
export interface DialogDelegate {
  /** A re-INVITE or UPDATE. Default: our current SDP again, or 488 when we have none. */
  onOffer?(offer: SessionOffer): OfferReply | Promise<OfferReply>;
  /** An INFO (RFC 6086), e.g. application/dtmf-relay: answer it. Default: 200. */
  onInfo?(request: SipRequest, transaction: ServerTransaction): void;
  /** An OPTIONS in the dialog: answer it. Default: 200 with Allow. */
  onOptions?(request: SipRequest, transaction: ServerTransaction): void;
  /** Any other method (NOTIFY, REFER, MESSAGE...): answer it. Default: 501. */
  onRequest?(request: SipRequest, transaction: ServerTransaction): void;
  /** The ACK of a 2xx we sent (the INVITE's or a re-INVITE's). */
  onAck?(ack: SipRequest): void;
  onTerminated?(end: DialogEnd): void;
  /**
   * Where the peer of a dialog pinned to a connection can be reached now, asked before each
   * request we send in it: a client registered over a connection (a browser, a phone on TCP)
   * that connected again registers the new connection, while the old one may linger
   * half-open. The dialog moves to a connection of the same protocol returned; null, or
   * anything else, keeps it where it is. Default: where it is.
   */
  reachableAt?(): Promise<Destination | null>;
}
