import {
  generateDtlsCertificate,
  type DtlsCertificate,
} from '../../src/media/dtls/dtls-certificate.js';
import { DtlsContext } from '../../src/media/dtls/dtls-context.js';
import { DtlsEndpoint } from '../../src/media/dtls/dtls-endpoint.js';
import type { DtlsRole } from '../../src/media/dtls/srtp-keys.js';
import { SrtpContext, type SrtpDropReason } from '../../src/media/srtp/srtp-context.js';
import type { SrtpSuite } from '../../src/media/srtp/srtp-suite.js';
import { createIceCredentials, type IceCredentials } from '../../src/media/webrtc/ice/index.js';
import {
  bindingRequest,
  parseStunMessage,
  type ReceivedStunMessage,
} from '../../src/media/webrtc/stun/index.js';

/** What the gateway's SDP gives the peer: its ICE credentials and certificate fingerprint. */
export interface GatewayTransport {
  port: number;
  ice: IceCredentials;
  fingerprint: string;
}

/** One datagram from the gateway, sorted by RFC 7983's first byte and unprotected. */
export type PeerDatagram =
  | { kind: 'stun'; message: ReceivedStunMessage }
  | { kind: 'dtls' }
  | { kind: 'rtp' | 'rtcp'; plain: Buffer }
  | { kind: 'refused'; what: 'rtp' | 'rtcp'; reason: SrtpDropReason }
  /** SRTP before the keys were in, or of no known kind. */
  | { kind: 'early' };

const SUITES: Record<string, SrtpSuite> = {
  SRTP_AEAD_AES_128_GCM: 'AEAD_AES_128_GCM',
  SRTP_AES128_CM_SHA1_80: 'AES_CM_128_HMAC_SHA1_80',
  SRTP_AES128_CM_SHA1_32: 'AES_CM_128_HMAC_SHA1_32',
};

/**
 * The transport of a WebRTC peer as a browser runs it, without a socket of its own: full ICE's
 * controlling side (a nominating check signed with the gateway's password), a DTLS endpoint in
 * the role the SDP gave it, and the SRTP contexts its keys make. Shared by the test peer and
 * the benchmarks' WebRTC callers, which send many legs from few sockets.
 */
export class WebrtcPeerTransport {
  readonly ice: IceCredentials;
  readonly certificate: DtlsCertificate;
  private dtls: DtlsEndpoint | null = null;
  private inbound: SrtpContext | null = null;
  private outbound: SrtpContext | null = null;
  private connected: Promise<void> | null = null;

  constructor(
    /** Sends a datagram to the gateway's port. */
    private readonly send: (datagram: Buffer, port: number) => void,
    options: { certificate?: DtlsCertificate; ice?: IceCredentials } = {},
  ) {
    this.ice = options.ice ?? createIceCredentials();
    this.certificate = options.certificate ?? generateDtlsCertificate('webrtc-test-peer');
  }

  get fingerprint(): string {
    return this.certificate.sdpFingerprint;
  }

  get profileSuite(): SrtpSuite | null {
    return this.outbound?.suite ?? null;
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
    this.send(request, to.port);
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
          send: (datagram) => this.send(datagram, to.port),
          onConnected: (keys) => {
            const suite = SUITES[keys.profile]!;
            const key = (direction: 'inbound' | 'outbound', local: boolean) =>
              new SrtpContext({
                suite,
                masterKey: local ? keys.localMasterKey : keys.remoteMasterKey,
                masterSalt: local ? keys.localMasterSalt : keys.remoteMasterSalt,
                direction,
              });
            this.inbound = key('inbound', false);
            this.outbound = key('outbound', true);
            resolve();
          },
          onFailed: (failure) => reject(new Error(`${failure.kind}: ${failure.reason}`)),
        },
      });
      if (role === 'client') this.dtls.start();
    });
    return this.connected;
  }

  /** An RTP packet protected for the gateway; throws before DTLS gave the keys. */
  protectRtp(packet: Uint8Array): Buffer {
    if (this.outbound === null) throw new Error('Expected DTLS to have keyed SRTP first');
    return this.outbound.protectRtp(packet);
  }

  /** Sorts a datagram from the gateway (RFC 7983 5.1.2), feeding DTLS and unprotecting SRTP. */
  receive(data: Buffer): PeerDatagram {
    const first = data[0]!;
    if (first <= 3) return { kind: 'stun', message: parseStunMessage(data) };
    if (first >= 20 && first <= 63) {
      this.dtls?.feed(data);
      return { kind: 'dtls' };
    }
    if (first < 128 || first > 191 || this.inbound === null) return { kind: 'early' };
    const type = data[1]! & 0x7f;
    // RFC 5761 4: payload types 64-95 on a muxed port are RTCP.
    const what = type >= 64 && type <= 95 ? 'rtcp' : 'rtp';
    const plain =
      what === 'rtcp' ? this.inbound.unprotectRtcp(data) : this.inbound.unprotectRtp(data);
    if (typeof plain === 'string') return { kind: 'refused', what, reason: plain };
    return { kind: what, plain };
  }

  close(): void {
    this.dtls?.close();
  }
}
