import type { SdpCandidate } from './ice-candidate.js';
import type { NegotiatedTransport } from './negotiated-audio.js';
import { SdpParseError } from './sdp-parse-error.js';
import type { OutgoingTransport } from './sdp-writer.js';
import type { MediaStream, StreamTransport } from './session-description.js';
import type { DtlsFingerprint, DtlsSetup } from './transport-lines.js';

/** The profile voxgate writes for WebRTC (RFC 8829 5.1.2). */
export const WEBRTC_PROFILE = 'UDP/TLS/RTP/SAVPF';

/**
 * Profiles read as WebRTC audio: RFC 8829 5.1.3 asks an answerer to take RTP/SAVPF and
 * UDP/TLS/RTP/SAVP as well, and to answer with the profile offered.
 */
const WEBRTC_PROFILES: ReadonlySet<string> = new Set([
  'UDP/TLS/RTP/SAVPF',
  'RTP/SAVPF',
  'UDP/TLS/RTP/SAVP',
]);

export function isWebrtcProfile(protocol: string): boolean {
  return WEBRTC_PROFILES.has(protocol.toUpperCase());
}

/** voxgate's own side of a WebRTC stream: fixed for a session, the setup follows the peer. */
export interface LocalTransport {
  readonly ice: { readonly ufrag: string; readonly pwd: string };
  /** The hash of voxgate's DTLS certificate, from the DTLS side. */
  readonly fingerprint: DtlsFingerprint;
  readonly candidates: readonly SdpCandidate[];
}

/** Why an offered WebRTC stream cannot be taken, or null when it can. */
export function unusableTransport(stream: MediaStream): string | null {
  const transport = stream.transport;
  if (transport?.ice == null) return 'the WebRTC audio stream has no a=ice-ufrag and a=ice-pwd';
  if (transport.fingerprints.length === 0) {
    return 'the WebRTC audio stream has no a=fingerprint (RFC 8842 5.2)';
  }
  // RFC 8829 5.1.1: a WebRTC endpoint multiplexes RTCP on the RTP port; voxgate's legs take
  // one port each, so it is required.
  if (!transport.rtcpMux)
    return 'the WebRTC audio stream has no a=rtcp-mux, which voxgate requires';
  if (transport.setup === 'holdconn') return 'the WebRTC audio stream offers a=setup:holdconn';
  // RFC 8445 2.5: a lite agent sends no checks; voxgate is one, so with a lite peer neither
  // side would check and no pair would ever be selected.
  if (transport.iceLite) {
    return 'the WebRTC audio stream is from an ICE-lite agent (a=ice-lite), as voxgate is: neither would check';
  }
  return null;
}

/**
 * The answer's a=setup. RFC 8842 5.3 (after RFC 5763 5): the offerer writes actpass and the
 * answerer MUST take active or passive; active is RECOMMENDED, so the DTLS handshake starts
 * as soon as ICE connects instead of waiting for the answer to reach the offerer. An offer
 * without a=setup means active (RFC 4145 4), answered passive. A re-offer of actpass while a
 * DTLS association is in place (`current`, voxgate's role in it) is answered with that role:
 * the association carries on, and a browser refuses an answer that would reverse its role
 * (JSEP, RFC 8829: a subsequent answer keeps the role in place). A re-offer that takes a role
 * itself is answered with the other, as a first one is.
 */
export function answerSetup(offered: DtlsSetup | null, current?: 'client' | 'server'): DtlsSetup {
  if (offered === 'actpass' && current !== undefined) {
    return current === 'client' ? 'active' : 'passive';
  }
  return offered === 'active' || offered === null ? 'passive' : 'active';
}

export function outgoingTransport(local: LocalTransport, setup: DtlsSetup): OutgoingTransport {
  return { ice: local.ice, fingerprint: local.fingerprint, setup, candidates: local.candidates };
}

export function negotiatedTransport(
  transport: StreamTransport,
  ourSetup: DtlsSetup,
  local: Pick<LocalTransport, 'ice'>,
): NegotiatedTransport {
  if (transport.ice === null) throw new SdpParseError('the WebRTC stream has no ICE credentials');
  return {
    mid: transport.mid,
    remoteIce: transport.ice,
    remoteIceLite: transport.iceLite,
    remoteCandidates: transport.candidates,
    remoteFingerprints: transport.fingerprints,
    dtlsRole: ourSetup === 'active' ? 'client' : 'server',
    localIce: local.ice,
  };
}

/**
 * The transport of an answer to our WebRTC offer. Breaking RFC 8842 5.3 (an answer of
 * actpass) or leaving out what WebRTC needs is an SdpParseError.
 */
export function answeredTransport(
  stream: MediaStream,
  local: Pick<LocalTransport, 'ice'>,
): NegotiatedTransport {
  const reason = unusableTransport(stream);
  if (reason !== null) throw new SdpParseError(reason.replace('stream', 'answer'));
  // RFC 4145 4.1: an answer without a=setup means passive.
  const setup = stream.transport?.setup ?? 'passive';
  // RFC 8842 5.3: the answerer MUST NOT use actpass.
  if (setup === 'actpass') throw new SdpParseError('the answer has a=setup:actpass');
  return negotiatedTransport(stream.transport!, setup === 'active' ? 'passive' : 'active', local);
}
