import { isIP } from 'node:net';
import type { Config } from '../config/config.js';
import { loadDtlsCertificate, type DtlsCertificate } from '../media/dtls/dtls-certificate.js';
import { createIceCredentials } from '../media/webrtc/ice/index.js';
import type { WebrtcTransportSpec, WebrtcUpdate } from '../media/webrtc/webrtc-transport.js';
import {
  isWebrtcProfile,
  parseSessionDescription,
  type DtlsFingerprint,
  type NegotiatedTransport,
  type WebrtcSessionOptions,
} from '../sip/sdp/index.js';

/**
 * What WebRTC legs (browsers over WS/WSS) run on: the process's DTLS certificate, loaded or
 * made once at start, which every media worker presents and every WebRTC SDP names by its
 * fingerprint.
 */
export interface WebrtcSupport {
  /** For the media workers (posted to each as it starts). */
  readonly media: {
    certificate: DtlsCertificate;
    handshakeTimeoutMs: number;
    consentTimeoutMs: number;
  };
  /** Our a=fingerprint. */
  readonly fingerprint: DtlsFingerprint;
}

/** Loads VOXGATE_DTLS_CERT and VOXGATE_DTLS_KEY, or makes a certificate; throws naming a bad one. */
export function loadWebrtcSupport(config: Pick<Config, 'dtls'>): WebrtcSupport {
  const certificate = loadDtlsCertificate(config.dtls);
  return {
    media: {
      certificate,
      handshakeTimeoutMs: config.dtls.handshakeTimeoutMs,
      consentTimeoutMs: config.dtls.consentTimeoutMs,
    },
    fingerprint: certificate.fingerprint,
  };
}

/** A new WebRTC leg's own transport: fresh ICE credentials, for its SDP and its media session. */
export interface WebrtcLegTransport {
  readonly spec: WebrtcTransportSpec;
  readonly sdp: WebrtcSessionOptions;
}

/** Why this gateway cannot open a WebRTC leg; null when it can. */
export function webrtcUnavailable(
  support: WebrtcSupport | undefined,
  publicHost: string,
): string | null {
  if (support === undefined) return 'this gateway takes no WebRTC calls (no DTLS certificate)';
  if (isIP(publicHost) === 0) {
    return `WebRTC calls need VOXGATE_PUBLIC_HOST to be an IP address (it is "${publicHost}")`;
  }
  return null;
}

/**
 * The transport of a new WebRTC leg, or why there cannot be one. VOXGATE_PUBLIC_HOST must be
 * an IP address: it is the ICE host candidate (RFC 8839 5.1 writes an address there).
 */
export function webrtcLegTransport(
  support: WebrtcSupport | undefined,
  publicHost: string,
): WebrtcLegTransport | string {
  const unavailable = webrtcUnavailable(support, publicHost);
  if (unavailable !== null) return unavailable;
  const { fingerprint } = support as WebrtcSupport;
  const ice = createIceCredentials();
  return {
    spec: { localIce: ice },
    sdp: { ice, fingerprint, freshIce: () => createIceCredentials() },
  };
}

/** Whether an SDP offer's first audio stream is WebRTC's (UDP/TLS/RTP/SAVPF and kin). */
export function offersWebrtc(sdp: string): boolean {
  try {
    const audio = parseSessionDescription(sdp).streams.find((s) => s.kind === 'audio');
    return audio !== undefined && isWebrtcProfile(audio.protocol);
  } catch {
    // Not SDP: the answer says so.
    return false;
  }
}

/**
 * The peer's side of a negotiated WebRTC stream, as the media session takes it, with our
 * credentials as the exchange wrote them (new ones when the peer restarted ICE).
 */
export function peerTransport(transport: NegotiatedTransport): WebrtcUpdate {
  return {
    localIce: transport.localIce,
    remoteUfrag: transport.remoteIce.ufrag,
    remoteFingerprints: transport.remoteFingerprints.map((f) => `${f.algorithm} ${f.value}`),
    role: transport.dtlsRole,
  };
}
