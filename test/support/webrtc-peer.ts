import { createSocket, type Socket } from 'node:dgram';
import {
  generateDtlsCertificate,
  type DtlsCertificate,
} from '../../src/media/dtls/dtls-certificate.js';
import { DtlsContext } from '../../src/media/dtls/dtls-context.js';
import { DtlsEndpoint } from '../../src/media/dtls/dtls-endpoint.js';
import type { DtlsRole } from '../../src/media/dtls/srtp-keys.js';
import { parseRtcpCompound, type RtcpPacket } from '../../src/media/rtp/rtcp-packet.js';
import { parseRtpPacket, serializeRtpPacket } from '../../src/media/rtp/rtp-packet.js';
import { SrtpContext } from '../../src/media/srtp/srtp-context.js';
import type { SrtpSuite } from '../../src/media/srtp/srtp-suite.js';
import { createIceCredentials, type IceCredentials } from '../../src/media/webrtc/ice/index.js';
import {
  bindingRequest,
  parseStunMessage,
  type ReceivedStunMessage,
} from '../../src/media/webrtc/stun/index.js';
import type { ReceivedRtp } from './rtp-peer.js';

/** What the gateway's SDP gives the peer: its ICE credentials and certificate fingerprint. */
export interface GatewayTransport {
  port: number;
  ice: IceCredentials;
  fingerprint: string;
}

const SUITES: Record<string, SrtpSuite> = {
  SRTP_AEAD_AES_128_GCM: 'AEAD_AES_128_GCM',
  SRTP_AES128_CM_SHA1_80: 'AES_CM_128_HMAC_SHA1_80',
  SRTP_AES128_CM_SHA1_32: 'AES_CM_128_HMAC_SHA1_32',
};

/**
 * The far side of a WebRTC leg, scripted from voxgate's own blocks as a browser would use
 * them: full ICE's controlling side (a nominating check signed with the gateway's password),
 * a DTLS endpoint in the role the SDP gave it, SRTP both ways on one loopback socket.
 */
export class WebrtcTestPeer {
  readonly ice: IceCredentials = createIceCredentials();
  readonly certificate: DtlsCertificate = generateDtlsCertificate('webrtc-test-peer');
  /** RTP the gateway sent, unprotected and parsed. */
  readonly received: ReceivedRtp[] = [];
  readonly rtcp: RtcpPacket[][] = [];
  /** Datagrams the peer could not unprotect. */
  readonly refused: string[] = [];
  readonly stunResponses: ReceivedStunMessage[] = [];
  /** Datagrams the gateway sent before the keys were in (SRTP) or of no known kind. */
  earlyMedia = 0;
  private dtls: DtlsEndpoint | null = null;
  private inbound: SrtpContext | null = null;
  private outbound: SrtpContext | null = null;
  private sequence = 3000;
  private timestamp = 90_000;
  private readonly opened = Date.now();
  private connected: Promise<void> | null = null;

  private constructor(
    private readonly socket: Socket,
    readonly ssrc: number,
  ) {
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

  get fingerprint(): string {
    return this.certificate.sdpFingerprint;
  }

  /** A connectivity check to the gateway (with USE-CANDIDATE: a nomination). */
  check(to: GatewayTransport, options: { useCandidate?: boolean; key?: string } = {}): void {
    const request = bindingRequest({
      username: `${to.ice.ufrag}:${this.ice.ufrag}`,
      key: Buffer.from(options.key ?? to.ice.pwd, 'utf8'),
      priority: 2122260223,
      useCandidate: options.useCandidate ?? true,
      role: 'controlling',
      tieBreaker: 0x0102030405060708n,
    });
    this.sendRaw(request, to.port);
  }

  /**
   * Starts DTLS in `role` against the gateway (a client sends its ClientHello now); resolves
   * once the handshake gave the SRTP keys.
   */
  startDtls(to: GatewayTransport, role: DtlsRole): Promise<void> {
    this.connected ??= new Promise((resolve, reject) => {
      this.dtls = new DtlsEndpoint({
        context: new DtlsContext(this.certificate),
        role,
        remoteFingerprints: [to.fingerprint],
        listener: {
          send: (datagram) => this.sendRaw(datagram, to.port),
          onConnected: (keys) => {
            const suite = SUITES[keys.profile]!;
            this.inbound = new SrtpContext({
              suite,
              masterKey: keys.remoteMasterKey,
              masterSalt: keys.remoteMasterSalt,
              direction: 'inbound',
            });
            this.outbound = new SrtpContext({
              suite,
              masterKey: keys.localMasterKey,
              masterSalt: keys.localMasterSalt,
              direction: 'outbound',
            });
            resolve();
          },
          onFailed: (failure) => reject(new Error(`${failure.kind}: ${failure.reason}`)),
        },
      });
      if (role === 'client') this.dtls.start();
    });
    return this.connected;
  }

  get profileSuite(): SrtpSuite | null {
    return this.outbound?.suite ?? null;
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
    const srtp = this.outbound!.protectRtp(packet);
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
    this.dtls?.close();
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }

  private receive(data: Buffer): void {
    const first = data[0]!;
    if (first <= 3) this.stunResponses.push(parseStunMessage(data));
    else if (first >= 20 && first <= 63) this.dtls?.feed(data);
    else if (first >= 128 && first <= 191) this.receiveSrtp(data);
    else this.earlyMedia++;
  }

  private receiveSrtp(data: Buffer): void {
    if (this.inbound === null) {
      this.earlyMedia++;
      return;
    }
    const type = data[1]! & 0x7f;
    if (type >= 64 && type <= 95) {
      const plain = this.inbound.unprotectRtcp(data);
      if (typeof plain === 'string') this.refused.push(`rtcp ${plain}`);
      else this.rtcp.push(parseRtcpCompound(plain));
      return;
    }
    const plain = this.inbound.unprotectRtp(data);
    if (typeof plain === 'string') {
      this.refused.push(`rtp ${plain}`);
      return;
    }
    const packet = parseRtpPacket(Buffer.from(plain));
    this.received.push({
      ...packet,
      at: Date.now() - this.opened,
      from: { address: '127.0.0.1', port: 0 },
    });
  }
}
