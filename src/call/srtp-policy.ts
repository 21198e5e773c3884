import type { SdesKeys } from '../media/srtp/sdes-protection.js';
import { splitSrtpKeyAndSalt } from '../media/srtp/srtp-suite.js';
import { parseSessionDescription, type NegotiatedSdes } from '../sip/sdp/index.js';

/**
 * Whether a SIP endpoint's or a trunk's calls carry SDES-SRTP (RFC 4568):
 * `required`: RTP/SAVP with a=crypto only; a plain RTP offer or answer is refused (488);
 * `optional`: an RTP/SAVP offer is answered with SRTP, a plain one with RTP; our own offers are
 *   plain RTP/AVP (an RTP/SAVP offer fails with a peer that lacks SRTP, and RTP/AVP with
 *   a=crypto is not standard);
 * `off`: plain RTP only;
 * `dtls` (endpoints only): calls to the endpoint offer WebRTC's media (ICE-lite, DTLS-SRTP,
 *   rtcp-mux), which softphones such as baresip take with their DTLS-SRTP and ICE modules; its
 *   keys never travel in SDP, so any SIP transport carries it. Its own offers are answered as
 *   they come (DTLS-SRTP, SDES over TLS, or plain).
 * The SDES keys travel in the SDP, so SDES runs only over SIP over TLS whatever the policy.
 */
export const SRTP_POLICIES = ['required', 'optional', 'off'] as const;
export const ENDPOINT_SRTP_POLICIES = [...SRTP_POLICIES, 'dtls'] as const;
export type SrtpPolicy = (typeof ENDPOINT_SRTP_POLICIES)[number];

/** An endpoint's or a trunk's policy when none was set. */
export const DEFAULT_SRTP_POLICY: SrtpPolicy = 'optional';

/** What a leg runs with: SDES required or optional, none (plain RTP), or why it cannot run. */
export type LegSdes = 'required' | 'optional' | null | { refuse: string };

/** The SIP transport decides: SDES keys are never sent, nor taken, in the clear. */
export function legSdes(policy: SrtpPolicy | undefined, overTls: boolean): LegSdes {
  const effective = policy ?? DEFAULT_SRTP_POLICY;
  if (effective === 'off') return null;
  if (effective === 'dtls') return overTls ? 'optional' : null;
  if (overTls) return effective;
  if (effective === 'required') {
    return { refuse: 'SRTP is required on this leg, and SDES-SRTP needs SIP over TLS' };
  }
  return null;
}

/** Why an offer is refused before anything else: SDES keys that came in the clear. */
export const SDES_IN_THE_CLEAR = 'SDES-SRTP keys (a=crypto) are taken only over SIP over TLS';

/** Whether an offer's first audio stream is RTP/SAVP (SDES-SRTP). */
export function offersSdes(sdp: string): boolean {
  try {
    const audio = parseSessionDescription(sdp).streams.find((s) => s.kind === 'audio');
    return audio !== undefined && audio.port !== 0 && audio.protocol.toUpperCase() === 'RTP/SAVP';
  } catch {
    // Not SDP: the answer says so.
    return false;
  }
}

/** Whether a request target or its destination is reached over TLS. */
export function reachedOverTls(target: string, protocol: string | undefined): boolean {
  if (protocol !== undefined) return protocol.toUpperCase() === 'TLS';
  return /^sips:/i.test(target) || /;transport=tls(?=[;>?]|$)/i.test(target);
}

/** The keys an SDES exchange settled, as the media session takes them. */
export function sdesKeysOf(sdes: NegotiatedSdes): SdesKeys {
  return {
    suite: sdes.suite,
    inbound: splitSrtpKeyAndSalt(sdes.suite, sdes.remoteKeySalt),
    outbound: splitSrtpKeyAndSalt(sdes.suite, sdes.localKeySalt),
  };
}
