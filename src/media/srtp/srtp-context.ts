import { addon, type NativeSrtpContext } from '../codec/native-addon.js';
import { checkIntegerInRange, checkUint8Array, describe } from '../codec/argument-checks.js';
import {
  checkSrtpSuite,
  SRTP_SUITE_PARAMETERS,
  type SrtpMasterKey,
  type SrtpSuite,
} from './srtp-suite.js';

/**
 * Why a packet was refused, as `/metrics` will count them in
 * `voxgate_srtp_dropped_total{reason}`: `auth` (the tag did not match: forged, corrupted, or
 * keyed otherwise), `replay` (an index seen already or older than the 128-packet window),
 * `malformed` (not version 2, or shorter than its header and tag).
 */
export type SrtpDropReason = 'auth' | 'replay' | 'malformed';

/** The native codes, by their negative value. */
const REASONS: readonly SrtpDropReason[] = ['auth', 'replay', 'malformed'];

const PROTECT_FAILURES: Record<SrtpDropReason, string> = {
  replay: 'its index was used already (the keystream would repeat) or is past the last one',
  malformed: 'it is not a version 2 packet with a complete header',
  auth: 'the cipher failed',
};

/** A packet we were asked to protect and could not: a duplicate index, or not RTP/RTCP. */
export class SrtpProtectError extends Error {
  constructor(
    readonly reason: SrtpDropReason,
    what: string,
  ) {
    super(`SRTP refused to protect ${what}: ${PROTECT_FAILURES[reason]}`);
    this.name = 'SrtpProtectError';
  }
}

/**
 * `inbound` unprotects what a peer sent with its key; `outbound` protects what we send with
 * ours. SDES gives each direction its own key, DTLS-SRTP a client and a server key; one key
 * must never protect in both directions (the keystreams would collide).
 */
export type SrtpDirection = 'inbound' | 'outbound';

export interface SrtpContextOptions extends SrtpMasterKey {
  suite: SrtpSuite;
  direction: SrtpDirection;
  /**
   * `rfc3711` (the default) derives the session keys from the master key and salt (key
   * derivation rate 0). `none` takes them as the session key and salt of both SRTP and SRTCP,
   * as RFC 7714's test vectors give them; AEAD_AES_128_GCM only, which has no auth key.
   */
  keyDerivation?: 'rfc3711' | 'none';
}

/**
 * One direction of a call leg's SRTP (RFC 3711, RFC 7714): AES_CM_128_HMAC_SHA1_80, _32 or
 * AEAD_AES_128_GCM in the native addon on Node's own OpenSSL, every SSRC's rollover counter
 * estimated from its sequence numbers and its packets checked against a 128-packet replay
 * window, SRTP and SRTCP alike.
 *
 * Where packets enter, unprotect works in place on the bytes it is given, such as the
 * datagram reader's batch, and returns a view of the plaintext, or why it dropped the packet
 * (with those bytes untouched). Where they leave, protect copies into a new Buffer, or the
 * in-place forms write the tag into room the caller left behind the packet
 * (`rtpOverhead`/`rtcpOverhead` bytes).
 */
export class SrtpContext {
  readonly suite: SrtpSuite;
  readonly direction: SrtpDirection;
  /** Bytes protect adds to an RTP packet, and unprotect takes off. */
  readonly rtpOverhead: number;
  /** Bytes protect adds to an RTCP packet (index word and tag), and unprotect takes off. */
  readonly rtcpOverhead: number;
  /** Packets unprotect refused, by reason, since the context was made. */
  readonly dropped: Record<SrtpDropReason, number> = { auth: 0, replay: 0, malformed: 0 };
  readonly #native: NativeSrtpContext;

  constructor(options: SrtpContextOptions) {
    this.suite = checkSrtpSuite(options.suite, 'options.suite');
    const direction: unknown = options.direction;
    if (direction !== 'inbound' && direction !== 'outbound') {
      throw new RangeError(
        `Expected inbound or outbound for options.direction but received ${describe(direction)}`,
      );
    }
    this.direction = direction;
    const parameters = SRTP_SUITE_PARAMETERS[this.suite];
    checkLength(options.masterKey, parameters.masterKeyLength, 'options.masterKey', this.suite);
    checkLength(options.masterSalt, parameters.masterSaltLength, 'options.masterSalt', this.suite);
    const derivation: unknown = options.keyDerivation ?? 'rfc3711';
    if (derivation !== 'rfc3711' && (derivation !== 'none' || this.suite !== 'AEAD_AES_128_GCM')) {
      throw new RangeError(
        `Expected rfc3711 (or none with AEAD_AES_128_GCM) for options.keyDerivation but received ${describe(derivation)}`,
      );
    }
    this.rtpOverhead = parameters.rtpOverhead;
    this.rtcpOverhead = parameters.rtcpOverhead;
    this.#native = new addon.SrtpContext(
      parameters.code,
      options.masterKey,
      options.masterSalt,
      derivation === 'rfc3711',
    );
  }

  /** The SRTP packet for an RTP packet, in a new Buffer. */
  protectRtp(packet: Uint8Array): Buffer {
    checkUint8Array(packet, 'packet');
    const out = Buffer.allocUnsafe(packet.length + this.rtpOverhead);
    out.set(packet);
    return out.subarray(0, this.protectRtpInPlace(out, packet.length));
  }

  /**
   * Protects buffer[0, length) in place, writing the tag behind it: the buffer must hold
   * `rtpOverhead` more bytes. Returns the SRTP packet's length.
   */
  protectRtpInPlace(buffer: Uint8Array, length: number): number {
    this.#checkProtect(buffer, length, this.rtpOverhead);
    return this.#protected(this.#native.protectRtp(buffer, length), 'an RTP packet');
  }

  /** The SRTCP packet for an RTCP packet (compound or not), encrypted, in a new Buffer. */
  protectRtcp(packet: Uint8Array): Buffer {
    checkUint8Array(packet, 'packet');
    const out = Buffer.allocUnsafe(packet.length + this.rtcpOverhead);
    out.set(packet);
    return out.subarray(0, this.protectRtcpInPlace(out, packet.length));
  }

  /** As protectRtpInPlace, with `rtcpOverhead` bytes of room for the index word and tag. */
  protectRtcpInPlace(buffer: Uint8Array, length: number): number {
    this.#checkProtect(buffer, length, this.rtcpOverhead);
    return this.#protected(this.#native.protectRtcp(buffer, length), 'an RTCP packet');
  }

  /**
   * Authenticates and decrypts an SRTP packet in place: returns a Buffer over the plaintext
   * RTP packet (the start of `packet`'s own bytes), or why it was dropped, `packet` then
   * unchanged.
   */
  unprotectRtp(packet: Uint8Array): Buffer | SrtpDropReason {
    this.#checkUnprotect(packet);
    return this.#unprotected(packet, this.#native.unprotectRtp(packet));
  }

  /** As unprotectRtp, for SRTCP; E = 0 packets (authenticated only) are accepted too. */
  unprotectRtcp(packet: Uint8Array): Buffer | SrtpDropReason {
    this.#checkUnprotect(packet);
    return this.#unprotected(packet, this.#native.unprotectRtcp(packet));
  }

  #checkProtect(buffer: Uint8Array, length: number, overhead: number): void {
    if (this.direction !== 'outbound') {
      throw new Error('This SRTP context is inbound: it unprotects and never protects');
    }
    checkUint8Array(buffer, 'buffer');
    checkIntegerInRange(length, 0, buffer.length - overhead, 'length');
  }

  #checkUnprotect(packet: Uint8Array): void {
    if (this.direction !== 'inbound') {
      throw new Error('This SRTP context is outbound: it protects and never unprotects');
    }
    checkUint8Array(packet, 'packet');
  }

  #protected(result: number, what: string): number {
    if (result >= 0) return result;
    throw new SrtpProtectError(REASONS[-result - 1] ?? 'malformed', what);
  }

  #unprotected(packet: Uint8Array, result: number): Buffer | SrtpDropReason {
    if (result >= 0) return Buffer.from(packet.buffer, packet.byteOffset, result);
    const reason = REASONS[-result - 1] ?? 'malformed';
    this.dropped[reason]++;
    return reason;
  }
}

function checkLength(value: unknown, length: number, name: string, suite: SrtpSuite): void {
  if (checkUint8Array(value, name).length !== length) {
    throw new RangeError(
      `Expected ${length} bytes for ${name} with ${suite} but received ${describe(value)}`,
    );
  }
}
