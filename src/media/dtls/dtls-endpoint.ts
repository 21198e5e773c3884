import { systemScheduler, type Scheduler, type TimerHandle } from '../../core/scheduler.js';
import { checkIntegerInRange, checkUint8Array } from '../codec/argument-checks.js';
import { addon, NativeDtlsState, type NativeDtlsEndpoint } from '../codec/native-addon.js';
import type { DtlsContext } from './dtls-context.js';
import { isWellFormedDtlsDatagram } from './dtls-records.js';
import { DEFAULT_DTLS_HANDSHAKE_TIMEOUT_MS } from './dtls-settings.js';
import {
  fingerprintCheck,
  parseDtlsFingerprint,
  type DtlsFingerprint,
} from './dtls-fingerprint.js';
import {
  isSrtpProfile,
  splitSrtpKeyingMaterial,
  srtpKeyingMaterialLength,
  SRTP_EXPORTER_LABEL,
  type DtlsRole,
  type SrtpKeys,
} from './srtp-keys.js';

/** Why a handshake or an association failed; each ends the call's media. */
export type DtlsFailure =
  /** The handshake did not complete in time (the peer is silent, or its datagrams are lost). */
  | { kind: 'timeout'; reason: string }
  /** The peer sent a fatal alert (it refused our certificate, say). */
  | { kind: 'alert'; reason: string }
  /** We found the peer wrong: its certificate does not match its fingerprint, no use_srtp, ... */
  | { kind: 'error'; reason: string };

/** What an endpoint reports upward. A throwing listener does not stop the endpoint. */
export interface DtlsListener {
  /** A datagram for the peer, to send on the socket and to the address its datagrams use. */
  send(datagram: Buffer): void;
  /** The handshake completed: the SRTP keys of both directions. */
  onConnected?(keys: SrtpKeys): void;
  onFailed?(failure: DtlsFailure): void;
  /** The peer sent close_notify: the call should end. */
  onClosed?(reason: string): void;
  /** A listener call threw. */
  onError?(error: Error): void;
}

export interface DtlsEndpointOptions {
  context: DtlsContext;
  role: DtlsRole;
  /** The peer's `a=fingerprint` values, parsed or as text (`sha-256 AB:CD:...`). */
  remoteFingerprints: readonly (DtlsFingerprint | string)[];
  listener: DtlsListener;
  /** The handshake deadline's clock (retransmissions follow OpenSSL's own clock). */
  scheduler?: Scheduler;
  /** How long the whole handshake may take (VOXGATE_DTLS_HANDSHAKE_TIMEOUT). */
  handshakeTimeoutMs?: number;
  /** The first retransmission timeout, doubled at each retransmission (RFC 6347 4.2.4.1). */
  initialRetransmitMs?: number;
  /** The largest datagram sent: records and flights are fragmented to fit. */
  mtu?: number;
}

export type DtlsEndpointState = 'new' | 'handshaking' | 'connected' | 'failed' | 'closed';

export interface DtlsEndpointCounters {
  datagramsIn: number;
  /** Datagrams dropped unread: a record in them is not well formed. */
  malformed: number;
  datagramsOut: number;
  /** Datagrams sent again because a flight's timer ran out. */
  retransmitted: number;
}

/** RFC 6347 4.2.4.1: "Implementations SHOULD use an initial timer value of 1 second". */
const DEFAULT_INITIAL_RETRANSMIT_MS = 1000;
/** Under the smallest path MTU of the usual paths, TURN and VPN overheads included. */
const DEFAULT_MTU = 1200;

/**
 * One DTLS-SRTP association (RFC 5763, RFC 5764) of one call leg, as client (a=setup:active) or
 * server (a=setup:passive). Datagrams the demultiplexer found to be DTLS (RFC 7983: first byte
 * 20 to 63) go to feed(); what is to be sent goes to the listener's send(). Once connected it
 * hands over the SRTP keys; it stays to answer a peer's retransmitted final flight and to see
 * a close_notify.
 */
export class DtlsEndpoint {
  readonly role: DtlsRole;
  readonly counters: DtlsEndpointCounters = {
    datagramsIn: 0,
    malformed: 0,
    datagramsOut: 0,
    retransmitted: 0,
  };
  private native: NativeDtlsEndpoint | null;
  private readonly listener: DtlsListener;
  private readonly scheduler: Scheduler;
  private readonly handshakeTimeoutMs: number;
  private current: DtlsEndpointState = 'new';
  private retransmitTimer: TimerHandle | undefined;
  private deadline: TimerHandle | undefined;
  private keys: SrtpKeys | null = null;

  constructor(options: DtlsEndpointOptions) {
    if (options.role !== 'client' && options.role !== 'server') {
      throw new RangeError(
        `Expected 'client' or 'server' for role but received ${JSON.stringify(options.role)}`,
      );
    }
    const check = fingerprintCheck(
      options.remoteFingerprints.map((f) => (typeof f === 'string' ? parseDtlsFingerprint(f) : f)),
    );
    this.handshakeTimeoutMs = checkIntegerInRange(
      options.handshakeTimeoutMs ?? DEFAULT_DTLS_HANDSHAKE_TIMEOUT_MS,
      1,
      600_000,
      'handshakeTimeoutMs',
    );
    const initialRetransmitMs = checkIntegerInRange(
      options.initialRetransmitMs ?? DEFAULT_INITIAL_RETRANSMIT_MS,
      10,
      60_000,
      'initialRetransmitMs',
    );
    const mtu = checkIntegerInRange(options.mtu ?? DEFAULT_MTU, 576, 9000, 'mtu');
    this.role = options.role;
    this.listener = options.listener;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.native = new addon.DtlsEndpoint(
      options.context.native,
      options.role === 'server',
      mtu,
      initialRetransmitMs,
      check.digest,
      check.values,
    );
  }

  get state(): DtlsEndpointState {
    return this.current;
  }

  /** The SRTP keys once connected. */
  get srtpKeys(): SrtpKeys | null {
    return this.keys;
  }

  /** Starts the handshake deadline; a client sends its ClientHello. */
  start(): void {
    if (this.current !== 'new' || this.native === null) return;
    this.current = 'handshaking';
    this.deadline = this.scheduler.after(this.handshakeTimeoutMs, () => this.timeOut());
    this.afterNative(this.native.start(), false);
  }

  /** One datagram from the peer (a server starts on its first). */
  feed(datagram: Uint8Array): void {
    checkUint8Array(datagram, 'datagram');
    if (this.current === 'new') this.start();
    if (this.native === null) return;
    this.counters.datagramsIn++;
    if (!isWellFormedDtlsDatagram(datagram)) {
      this.counters.malformed++;
      return;
    }
    this.afterNative(this.native.feed(datagram), false);
  }

  /** Ends the association: close_notify if connected, then nothing more is taken or sent. */
  close(): void {
    if (this.native === null) return;
    const out = this.native.close();
    this.current = 'closed';
    this.sendAll(out, false);
    this.release();
  }

  private afterNative(out: Buffer[], retransmission: boolean): void {
    this.sendAll(out, retransmission);
    this.checkState();
    this.armRetransmit();
  }

  private sendAll(out: Buffer[], retransmission: boolean): void {
    for (const datagram of out) {
      this.counters.datagramsOut++;
      if (retransmission) this.counters.retransmitted++;
      this.notify(() => this.listener.send(datagram));
    }
  }

  private checkState(): void {
    const native = this.native;
    if (native === null) return;
    const state = native.state();
    if (state === NativeDtlsState.handshaking) return;
    if (state === NativeDtlsState.connected) {
      if (this.current === 'handshaking') this.connected(native);
      return;
    }
    const reason = native.reason();
    this.release();
    if (state === NativeDtlsState.closedByPeer) {
      this.current = 'closed';
      this.notify(() => this.listener.onClosed?.(reason));
    } else if (state !== NativeDtlsState.closedLocally) {
      this.fail({ kind: state === NativeDtlsState.failedByPeerAlert ? 'alert' : 'error', reason });
    }
  }

  private connected(native: NativeDtlsEndpoint): void {
    this.deadline?.cancel();
    this.deadline = undefined;
    const profile = native.srtpProfile();
    if (profile === null || !isSrtpProfile(profile)) {
      // RFC 5764 4.1.2: without a use_srtp extension in the ServerHello, SRTP is not set up.
      this.close();
      this.fail({
        kind: 'error',
        reason: `the peer negotiated no SRTP profile (use_srtp) we offer (${profile ?? 'none'})`,
      });
      return;
    }
    const material = native.exportKeyingMaterial(
      SRTP_EXPORTER_LABEL,
      srtpKeyingMaterialLength(profile),
    );
    this.keys = splitSrtpKeyingMaterial(material, profile, this.role);
    this.current = 'connected';
    const keys = this.keys;
    this.notify(() => this.listener.onConnected?.(keys));
  }

  private timeOut(): void {
    this.deadline = undefined;
    if (this.current !== 'handshaking') return;
    this.native?.close();
    this.release();
    this.fail({
      kind: 'timeout',
      reason: `the DTLS handshake did not complete within ${this.handshakeTimeoutMs} ms (${this.counters.datagramsIn} datagrams received, ${this.counters.retransmitted} retransmitted)`,
    });
  }

  private fail(failure: DtlsFailure): void {
    this.current = 'failed';
    this.notify(() => this.listener.onFailed?.(failure));
  }

  /** Follows OpenSSL's retransmission timer: it says when, and whether one is due. */
  private armRetransmit(): void {
    this.retransmitTimer?.cancel();
    this.retransmitTimer = undefined;
    const ms = this.native?.timeoutMs() ?? -1;
    if (ms < 0) return;
    this.retransmitTimer = this.scheduler.after(ms, () => {
      this.retransmitTimer = undefined;
      if (this.native !== null) this.afterNative(this.native.handleTimeout(), true);
    });
  }

  private release(): void {
    this.retransmitTimer?.cancel();
    this.retransmitTimer = undefined;
    this.deadline?.cancel();
    this.deadline = undefined;
    this.native?.free();
    this.native = null;
  }

  private notify(call: () => void): void {
    try {
      call();
    } catch (error) {
      if (this.listener.onError === undefined) return;
      try {
        this.listener.onError(error instanceof Error ? error : new Error(String(error)));
      } catch {
        // A throwing onError has nowhere further to go.
      }
    }
  }
}
