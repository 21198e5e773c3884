import type { DtlsRole } from './srtp-keys.js';

/** The SDP `a=setup` values of RFC 4145 4 as DTLS-SRTP uses them (RFC 5763 5). */
export type SetupAttribute = 'active' | 'passive' | 'actpass';

/** The DTLS role of the side whose own `a=setup` is `setup` (active connects: the client). */
export function dtlsRoleOf(setup: 'active' | 'passive'): DtlsRole {
  return setup === 'active' ? 'client' : 'server';
}

/**
 * The `a=setup` an answerer puts in its answer to an offer's. RFC 5763 5: "The endpoint that is
 * the answerer MUST use the setup attribute value of setup:active or setup:passive ...
 * setup:active is RECOMMENDED", and RFC 4145 4.1 pairs active with passive.
 */
export function answerSetup(offered: SetupAttribute): 'active' | 'passive' {
  return offered === 'active' ? 'passive' : 'active';
}

/** RFC 5763 5: "The endpoint that is the offerer MUST use the setup attribute value of setup:actpass". */
export const OFFER_SETUP: SetupAttribute = 'actpass';
