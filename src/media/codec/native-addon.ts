import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The C++ addon's surface (native/src). It checks nothing: callers pass valid arguments. */
export interface NativeAddon {
  /** Sets SO_SNDBUF on a socket's descriptor; returns the size the kernel took. */
  setSendBuffer(fd: number, bytes: number): number;
  /** Puts one thread (a Linux thread id) under SCHED_RR; throws with `errno` when refused. */
  setRoundRobin(tid: number, priority: number): void;
  muLawEncode(pcm: Int16Array): Buffer;
  muLawDecode(codes: Uint8Array): Int16Array;
  aLawEncode(pcm: Int16Array): Buffer;
  aLawDecode(codes: Uint8Array): Int16Array;
  l16FromNetwork(bytes: Uint8Array): Int16Array;
  l16ToNetwork(pcm: Int16Array): Buffer;
  mix(frames: Int16Array[]): Int16Array;
  gain(pcm: Int16Array, factor: number): Int16Array;
  energyDbfs(pcm: Int16Array): number;
  Resampler: new (fromRate: number, toRate: number, quality: number) => NativeResampler;
  /**
   * Reads many UDP sockets: `onBatch` gets, once per wake-up, the bytes of every datagram read
   * and per datagram five numbers (the id given to add, offset, length, source port, IPv4
   * source as an unsigned number).
   */
  DatagramReader: new (
    onBatch: (bytes: Buffer, meta: Int32Array, count: number) => void,
  ) => NativeDatagramReader;
  NoiseSuppressor: new (rate: number, level: number) => NativeNoiseSuppressor;
  OpusEncoder: new (
    rate: number,
    bitrate: number,
    fec: boolean,
    lossPercent: number,
    dtx: boolean,
    complexity: number,
    celtOnly: boolean,
  ) => NativeOpusEncoder;
  OpusDecoder: new (rate: number) => NativeOpusDecoder;
  /** Samples a packet holds at `rate`, or libopus's negative error code. */
  opusPacketSamples(packet: Uint8Array, rate: number): number;
  /** libopus's text for an error code. */
  opusErrorText(code: number): string;
  /**
   * One direction's SRTP transform: suite 0 (AES_CM_128_HMAC_SHA1_80), 1 (_32) or 2
   * (AEAD_AES_128_GCM), the master key and salt, and whether to derive the session keys from
   * them (false: they are the session key and salt, as RFC 7714's vectors give them).
   */
  SrtpContext: new (
    suite: number,
    key: Uint8Array,
    salt: Uint8Array,
    derive: boolean,
  ) => NativeSrtpContext;
  /** The RFC 3711 4.3.1 key derivation PRF's first `length` bytes for `label`. */
  deriveSrtpKey(
    masterKey: Uint8Array,
    masterSalt: Uint8Array,
    label: number,
    length: number,
  ): Buffer;
  /** A self-signed ECDSA P-256 certificate (SHA-256 signature) and its key, both PEM. */
  generateDtlsCertificate(commonName: string, days: number): { cert: string; key: string };
  /** Throws with OpenSSL's reason when the PEMs, cipher list or profile list are refused. */
  DtlsContext: new (
    certPem: string,
    keyPem: string,
    ciphers: string,
    srtpProfiles: string,
  ) => NativeDtlsContext;
  /**
   * One DTLS 1.2 association: `server` false is the client. The peer's certificate must hash
   * under `digest` (OpenSSL's name: SHA256, ...) to one of `expectedDigests`.
   */
  DtlsEndpoint: new (
    context: NativeDtlsContext,
    server: boolean,
    mtu: number,
    initialTimeoutMs: number,
    digest: string,
    expectedDigests: Uint8Array[],
  ) => NativeDtlsEndpoint;
}

/**
 * In-place SRTP and SRTCP on a Uint8Array. Each returns the packet's new length, or -1 (tag
 * mismatch), -2 (replayed, or too old for the window), -3 (malformed), -4 (no room for the
 * tag). Protect reads the packet from buffer[0, length) and needs room behind it.
 */
export interface NativeSrtpContext {
  protectRtp(buffer: Uint8Array, length: number): number;
  unprotectRtp(packet: Uint8Array): number;
  protectRtcp(buffer: Uint8Array, length: number): number;
  unprotectRtcp(packet: Uint8Array): number;
}

/** Opaque: the SSL_CTX of one thread. */
export type NativeDtlsContext = object;

/** States of a native DTLS endpoint (native/src/dtls.h). */
export const NativeDtlsState = {
  handshaking: 0,
  connected: 1,
  failedByPeerAlert: 2,
  failedLocally: 3,
  closedByPeer: 4,
  closedLocally: 5,
} as const;
export type NativeDtlsState = (typeof NativeDtlsState)[keyof typeof NativeDtlsState];

/** Each call that can make datagrams returns them, one Buffer a datagram, to send in order. */
export interface NativeDtlsEndpoint {
  start(): Buffer[];
  feed(datagram: Uint8Array): Buffer[];
  /** Retransmits the last flight if its timer is due (OpenSSL checks the time itself). */
  handleTimeout(): Buffer[];
  /** Milliseconds until handleTimeout is due; -1 when no timer runs. */
  timeoutMs(): number;
  /** close_notify when connected; the endpoint takes nothing more. */
  close(): Buffer[];
  /** Frees the OpenSSL objects now. */
  free(): void;
  state(): NativeDtlsState;
  /** Why it failed or closed; '' otherwise. */
  reason(): string;
  srtpProfile(): string | null;
  /** RFC 5705 exporter, no context; throws unless connected. */
  exportKeyingMaterial(label: string, length: number): Buffer;
}

export interface NativeOpusEncoder {
  /** One frame (2.5 to 60 ms) in, one packet out; throws on a libopus failure. */
  encode(pcm: Int16Array): Buffer;
  setBitrate(bitsPerSecond: number): void;
  setPacketLoss(percent: number): void;
  /** Codes no wider an Opus bandwidth than holds `hz`, the highest frequency worth coding. */
  setMaxBandwidth(hz: number): void;
  /** The complexity (0-10) from the next frame on. */
  setComplexity(complexity: number): void;
  /** Forgets the frames coded so far (OPUS_RESET_STATE); the settings stay. */
  reset(): void;
}

export interface NativeOpusDecoder {
  /**
   * A packet's audio, or with `fec` the FEC copy it carries of the packet before it, or with
   * a null packet `samples` of concealment; a negative number is libopus's error code.
   */
  decode(packet: Uint8Array | null, samples: number, fec: boolean): Int16Array | number;
}

export interface NativeDatagramReader {
  /** Starts reading an IPv4 socket's descriptor, its datagrams tagged with `id`. */
  add(fd: number, id: number): void;
  /** Stops reading a descriptor (before it is closed). */
  remove(fd: number): void;
  /** Stops reading everything. */
  close(): void;
}

export interface NativeResampler {
  process(pcm: Int16Array): Int16Array;
  inputLatency(): number;
}

export interface NativeNoiseSuppressor {
  process(frame: Int16Array): Int16Array;
}

// This module runs from src/media/codec (tsx) and from dist/src/media/codec (after tsc); the
// addon is built once into native/build at the repository root.
const ADDON_CANDIDATES = [
  '../../../native/build/Release/voxgate_native.node',
  '../../../../native/build/Release/voxgate_native.node',
];

function loadAddon(): NativeAddon {
  const paths = ADDON_CANDIDATES.map((p) => fileURLToPath(new URL(p, import.meta.url)));
  const found = paths.find((p) => existsSync(p));
  if (found === undefined) {
    throw new Error(
      `The native addon is not built (looked for ${paths.join(' and ')}); run npm run build:native`,
    );
  }
  return createRequire(import.meta.url)(found) as NativeAddon;
}

export const addon: NativeAddon = loadAddon();
