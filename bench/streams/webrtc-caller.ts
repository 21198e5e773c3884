import { performance } from 'node:perf_hooks';
import { OpusEncoder } from '../../src/media/codec/opus.js';
import {
  generateDtlsCertificate,
  type DtlsCertificate,
} from '../../src/media/dtls/dtls-certificate.js';
import type { IceCredentials } from '../../src/media/webrtc/ice/index.js';
import {
  WebrtcPeerTransport,
  type GatewayTransport,
} from '../../test/support/webrtc-peer-transport.js';
import { UNNUMBERED, type CallerWire, type WireFactory } from './rtp-callers.js';

const OPUS_PAYLOAD_TYPE = 111;
/** Opus's RTP clock is 48 kHz whatever it codes at (RFC 7587 4.1): 960 units per 20 ms. */
const SAMPLES_PER_FRAME = 960;
/** The callers code at 16 kHz, as a browser's speech does and the gateway's Opus legs run. */
const CODING_RATE = 16000;
/** A tone frame at 24 kbit/s is about 60 bytes; silence a few. */
const LOUD_BYTES = 20;
const HEADER_BYTES = 12;

/**
 * The callers' Opus, encoded once: the same 400 Hz tone as the PCMU callers (whole periods
 * in 20 ms, so frames follow each other seamlessly) and silence, a second of each, from an
 * encoder that ran a little first. Frames cannot carry a number through the gateway's
 * transcoding, so a WebRTC step counts echoed audio without numbers.
 */
const FRAMES = (() => {
  const encoder = new OpusEncoder(CODING_RATE);
  const frame = (loud: boolean) => {
    const pcm = new Int16Array(CODING_RATE / 50);
    if (loud)
      for (let i = 0; i < pcm.length; i++)
        pcm[i] = Math.round(10_000 * Math.sin((2 * Math.PI * 400 * i) / CODING_RATE));
    return Buffer.from(encoder.encode(pcm));
  };
  for (let i = 0; i < 10; i++) frame(true);
  const tone = Array.from({ length: 50 }, () => frame(true));
  const silence = Array.from({ length: 50 }, () => frame(false));
  return { tone, silence };
})();

/** What a WebRTC caller's SDP offer carries of its transport. */
export interface WebrtcOffer {
  ice: IceCredentials;
  fingerprint: string;
}

/** What the gateway's answer gave: its ICE credentials, fingerprint and DTLS setup. */
export interface WebrtcAnswer {
  ice: IceCredentials;
  fingerprint: string;
  setup: string;
}

/** Every WebRTC caller of a run: one certificate, and what their transports refused. */
export class WebrtcCallers {
  readonly certificate: DtlsCertificate = generateDtlsCertificate('streams-bench');
  /** SRTP from the gateway that failed to unprotect, and media before the keys were in. */
  refused = 0;
  early = 0;

  readonly wire: WireFactory = (send) => new WebrtcCallerWire(send, this);
}

/**
 * A caller's leg as a browser runs it: ICE (a nominating check, then one every 5 s for
 * consent), DTLS as the answer's setup says, SRTP both ways, Opus.
 */
export class WebrtcCallerWire implements CallerWire {
  readonly payloadType = OPUS_PAYLOAD_TYPE;
  readonly samplesPerFrame = SAMPLES_PER_FRAME;
  /** performance.now() when DTLS gave the keys, and when the first RTP came. */
  connectedAt: number | null = null;
  firstMediaAt: number | null = null;
  private readonly transport: WebrtcPeerTransport;
  private gateway: GatewayTransport | null = null;
  private silent = 0;

  constructor(
    send: (datagram: Buffer, port: number) => void,
    private readonly group: WebrtcCallers,
  ) {
    this.transport = new WebrtcPeerTransport(send, { certificate: group.certificate });
  }

  get offer(): WebrtcOffer {
    return { ice: this.transport.ice, fingerprint: this.transport.fingerprint };
  }

  get ready(): boolean {
    return this.connectedAt !== null;
  }

  /** Checks the gateway's port and runs DTLS; resolves once SRTP is keyed. */
  async connect(port: number, answer: WebrtcAnswer): Promise<void> {
    this.gateway = { port, ice: answer.ice, fingerprint: answer.fingerprint };
    // RFC 8842 5.3: the answer's active makes the offerer the DTLS server.
    const connected = this.transport.startDtls(
      this.gateway,
      answer.setup === 'active' ? 'server' : 'client',
    );
    this.transport.check(this.gateway);
    await connected;
    this.connectedAt = performance.now();
  }

  keepAlive(): void {
    if (this.gateway) this.transport.check(this.gateway, { useCandidate: false });
  }

  payload(n: number): Uint8Array {
    if (n >= 0) return FRAMES.tone[n % FRAMES.tone.length]!;
    return FRAMES.silence[this.silent++ % FRAMES.silence.length]!;
  }

  outbound(packet: Buffer): Buffer {
    return this.transport.protectRtp(packet);
  }

  inbound(data: Buffer): Buffer | null {
    const datagram = this.transport.receive(data);
    if (datagram.kind === 'refused') this.group.refused++;
    if (datagram.kind === 'early') this.group.early++;
    if (datagram.kind !== 'rtp') return null;
    this.firstMediaAt ??= performance.now();
    const plain = datagram.plain;
    if ((plain[1]! & 0x7f) !== OPUS_PAYLOAD_TYPE) return null;
    let offset = HEADER_BYTES + (plain[0]! & 0x0f) * 4;
    if (plain[0]! & 0x10) offset += 4 + plain.readUInt16BE(offset + 2) * 4;
    return plain.subarray(offset);
  }

  frameNumber(payload: Uint8Array): number {
    return payload.length >= LOUD_BYTES ? UNNUMBERED : -1;
  }
}
