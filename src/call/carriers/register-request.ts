import { formatUri, parseUri, SipRequest, type SipResponse } from '../../sip/message/index.js';
import { newTag } from '../../sip/transaction/response-to.js';

/** What stays the same across one carrier's REGISTERs (RFC 3261 10.2). */
export interface RegisterBinding {
  /** The Request-URI: the registrar's domain, without a user (RFC 3261 10.2). */
  registrar: string;
  /** The address-of-record, `sip:user@domain`, in To and From. */
  aor: string;
  /** Our Contact URI, where the carrier sends calls for the AOR. */
  contact: string;
  /**
   * RFC 3261 10.2: "the same Call-ID for all registrations" of a UA to one registrar, so that
   * a refresh replaces the binding rather than adding one; CSeq increases by one each time.
   */
  callId: string;
}

/** The REGISTER asking for `expires` seconds (0 removes the binding, RFC 3261 10.2.2). */
export function registerRequest(binding: RegisterBinding, cseq: number, expires: number) {
  return new SipRequest({
    method: 'REGISTER',
    uri: binding.registrar,
    headers: [
      ['Max-Forwards', '70'],
      ['From', `<${binding.aor}>;tag=${newTag()}`],
      ['To', `<${binding.aor}>`],
      ['Call-ID', binding.callId],
      ['CSeq', `${cseq} REGISTER`],
      ['Contact', `<${binding.contact}>`],
      ['Expires', String(expires)],
      ['Allow', 'INVITE, ACK, BYE, CANCEL, OPTIONS, INFO'],
    ],
  });
}

/**
 * The seconds a 200 grants our binding. RFC 3261 10.2.4: the 200 lists the current bindings;
 * "the UA SHOULD use the expires parameter of the Contact header field" that matches its own,
 * else the Expires header. A 200 that names neither grants what was asked.
 */
export function grantedExpires(response: SipResponse, contact: string, asked: number): number {
  const ours = sameUri(contact);
  const contacts = safe(() => response.contact()) ?? [];
  if (contacts !== '*') {
    const mine = contacts.find((c) => ours(formatUri(c.uri))) ?? null;
    const param = mine?.params.get('expires');
    if (param !== undefined && param !== null && /^\d+$/.test(param)) return Number(param);
  }
  const header = safe(() => response.expires());
  return header ?? asked;
}

/** RFC 3261 10.2.4 (423 Interval Too Brief): the registrar's Min-Expires, or null. */
export function minExpires(response: SipResponse): number | null {
  const raw = response.headers.get('Min-Expires')?.trim();
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : null;
}

/** RFC 3261 20.33: Retry-After's delta-seconds (a comment or duration after it is ignored). */
export function retryAfter(response: SipResponse): number | null {
  const raw = /^\s*(\d+)/.exec(response.headers.get('Retry-After') ?? '')?.[1];
  return raw === undefined ? null : Number(raw);
}

/**
 * RFC 3261 19.1.4 compares URIs part by part; a registrar echoes our Contact, perhaps with
 * its parameters in another order or the host in another case: user, host and port decide.
 */
function sameUri(contact: string): (other: string) => boolean {
  const key = (text: string) => {
    const uri = parseUri(text);
    return `${uri.user ?? ''}@${uri.host.toLowerCase()}:${uri.port ?? ''}`;
  };
  const mine = key(contact);
  return (other) => safe(() => key(other)) === mine;
}

function safe<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}
