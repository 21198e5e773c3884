import type { Socket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { OpusEncoder } from '../../src/media/codec/opus.js';
import { generateDtlsCertificate } from '../../src/media/dtls/dtls-certificate.js';
import { createIceCredentials, type IceCredentials } from '../../src/media/webrtc/ice/index.js';
import { WebrtcPeerTransport } from '../../test/support/webrtc-peer-transport.js';

/** The load process's side of a WebRTC leg: its ICE credentials and certificate, one for all. */
export interface WebrtcPeerIdentity {
  ice: IceCredentials;
  fingerprint: string;
}

/** A gateway leg the load process is to connect to: where it is and what its SDP would say. */
export interface WebrtcLegTarget {
  port: number;
  ice: IceCredentials;
  fingerprint: string;
}

export const OPUS_PAYLOAD_TYPE = 111;
/** Opus's 48 kHz RTP clock: 960 units per 20 ms (RFC 7587 4.1). */
export const OPUS_SAMPLES_PER_FRAME = 960;
const HOST = '127.0.0.1';

/** One 20 ms Opus frame of a 400 Hz tone at 16 kHz (24 kbit/s), encoded once and sent again. */
export const OPUS_FRAME: Buffer = (() => {
  const encoder = new OpusEncoder(16000);
  const pcm = new Int16Array(320);
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = Math.round(10_000 * Math.sin((2 * Math.PI * 400 * i) / 16000));
  let frame = encoder.encode(pcm);
  for (let i = 0; i < 5; i++) frame = encoder.encode(pcm);
  return Buffer.from(frame);
})();

/**
 * Every WebRTC leg the load process talks to, by the gateway port: its peer transport (ICE
 * check, DTLS as server since the gateway's legs are DTLS clients, SRTP), on whichever of the
 * load's sockets did its ICE check, which its media then uses.
 */
export class WebrtcLegs {
  readonly identity: WebrtcPeerIdentity = {
    ice: createIceCredentials(),
    fingerprint: '',
  };
  private readonly certificate = generateDtlsCertificate('relay-load');
  private readonly legs = new Map<number, WebrtcPeerTransport>();

  constructor() {
    this.identity.fingerprint = this.certificate.sdpFingerprint;
  }

  /** Checks and keys `leg` from `socket`; resolves with performance.now() once DTLS is done. */
  async connect(leg: WebrtcLegTarget, socket: Socket): Promise<number> {
    const transport = new WebrtcPeerTransport(
      (datagram, port) => socket.send(datagram, port, HOST),
      {
        certificate: this.certificate,
        ice: this.identity.ice,
      },
    );
    this.legs.set(leg.port, transport);
    const connected = transport.startDtls(leg, 'server');
    transport.check(leg);
    await connected;
    return performance.now();
  }

  /** A DTLS or STUN datagram from a leg goes to its transport: true when it was one. */
  handshake(data: Buffer, fromPort: number): boolean {
    const first = data[0]!;
    if (first > 63) return false;
    this.legs.get(fromPort)?.receive(data);
    return true;
  }

  protect(port: number, packet: Buffer): Buffer {
    return this.legs.get(port)!.protectRtp(packet);
  }

  forget(port: number): void {
    this.legs.get(port)?.close();
    this.legs.delete(port);
  }
}
