import { createSocket, type Socket } from 'node:dgram';
import type { DtlsCertificate } from '../../src/media/dtls/dtls-certificate.js';
import type { DtlsRole } from '../../src/media/dtls/srtp-keys.js';
import { parseRtcpCompound, type RtcpPacket } from '../../src/media/rtp/rtcp-packet.js';
import { parseRtpPacket, serializeRtpPacket } from '../../src/media/rtp/rtp-packet.js';
import type { SrtpSuite } from '../../src/media/srtp/srtp-suite.js';
import type { IceCredentials } from '../../src/media/webrtc/ice/index.js';
import type { ReceivedStunMessage } from '../../src/media/webrtc/stun/index.js';
import type { ReceivedRtp } from './rtp-peer.js';
import { WebrtcPeerTransport, type GatewayTransport } from './webrtc-peer-transport.js';

export type { GatewayTransport } from './webrtc-peer-transport.js';

/**
 * The far side of a WebRTC leg, scripted from voxgate's own blocks as a browser would use
 * them (see WebrtcPeerTransport): ICE, DTLS and SRTP both ways on one loopback socket, and
 * everything the gateway sent kept for the test to read.
 */
export class WebrtcTestPeer {
  /** RTP the gateway sent, unprotected and parsed. */
  readonly received: ReceivedRtp[] = [];
  readonly rtcp: RtcpPacket[][] = [];
  /** Datagrams the peer could not unprotect. */
  readonly refused: string[] = [];
  readonly stunResponses: ReceivedStunMessage[] = [];
  /** Datagrams the gateway sent before the keys were in (SRTP) or of no known kind. */
  earlyMedia = 0;
  private readonly transport: WebrtcPeerTransport;
  private sequence = 3000;
  private timestamp = 90_000;
  private readonly opened = Date.now();

  private constructor(
    private readonly socket: Socket,
    readonly ssrc: number,
  ) {
    this.transport = new WebrtcPeerTransport((datagram, port) => this.sendRaw(datagram, port));
    socket.on('message', (data) => this.receive(data));
  }

  static async open(ssrc = 0x5eed0001): Promise<WebrtcTestPeer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new WebrtcTestPeer(socket, ssrc);
  }

  get address(): { address: string; port: number } {
    return { address: '127.0.0.1', port: this.socket.address().port };
  }

  get ice(): IceCredentials {
    return this.transport.ice;
  }

  get certificate(): DtlsCertificate {
    return this.transport.certificate;
  }

  get fingerprint(): string {
    return this.transport.fingerprint;
  }

  get profileSuite(): SrtpSuite | null {
    return this.transport.profileSuite;
  }

  /** A connectivity check to the gateway (with USE-CANDIDATE: a nomination). */
  check(to: GatewayTransport, options: { useCandidate?: boolean; key?: string } = {}): void {
    this.transport.check(to, options);
  }

  /**
   * Starts DTLS in `role` against the gateway (a client sends its ClientHello now); resolves
   * once the handshake gave the SRTP keys.
   */
  startDtls(to: GatewayTransport, role: DtlsRole): Promise<void> {
    return this.transport.startDtls(to, role);
  }

  /**
   * One SRTP packet to the gateway; `tamper` changes its bytes after protection. Returns a
   * copy of what was sent (to send again: a replay).
   */
  sendRtp(
    port: number,
    payload: Uint8Array,
    options: { payloadType: number; samples: number; tamper?: (srtp: Buffer) => void },
  ): Buffer {
    const packet = serializeRtpPacket({
      marker: false,
      payloadType: options.payloadType,
      sequenceNumber: this.sequence,
      timestamp: this.timestamp,
      ssrc: this.ssrc,
      payload,
    });
    this.sequence = (this.sequence + 1) & 0xffff;
    this.timestamp = (this.timestamp + options.samples) >>> 0;
    const srtp = this.transport.protectRtp(packet);
    options.tamper?.(srtp);
    this.sendRaw(srtp, port);
    return Buffer.from(srtp);
  }

  /** Sends payloads one every 20 ms, as a browser does. */
  async stream(
    port: number,
    payloads: readonly Uint8Array[],
    options: { payloadType: number; samples: number },
  ): Promise<void> {
    const start = Date.now();
    for (let i = 0; i < payloads.length; i++) {
      const due = start + i * 20 - Date.now();
      if (due > 0) await new Promise((r) => setTimeout(r, due));
      this.sendRtp(port, payloads[i]!, options);
    }
  }

  sendRaw(datagram: Buffer, port: number): void {
    this.socket.send(datagram, port, '127.0.0.1');
  }

  async close(): Promise<void> {
    this.transport.close();
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }

  private receive(data: Buffer): void {
    const datagram = this.transport.receive(data);
    switch (datagram.kind) {
      case 'stun':
        this.stunResponses.push(datagram.message);
        break;
      case 'early':
        this.earlyMedia++;
        break;
      case 'refused':
        this.refused.push(`${datagram.what} ${datagram.reason}`);
        break;
      case 'rtcp':
        this.rtcp.push(parseRtcpCompound(datagram.plain));
        break;
      case 'rtp':
        this.received.push({
          ...parseRtpPacket(Buffer.from(datagram.plain)),
          at: Date.now() - this.opened,
          from: { address: '127.0.0.1', port: 0 },
        });
        break;
      case 'dtls':
        break;
    }
  }
}
