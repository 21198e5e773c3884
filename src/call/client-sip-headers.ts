/**
 * The SIP headers a client adds to its calls (`sip_headers` of POST Call/, `sipHeaders` of
 * Dial and User): which names are reserved, and how they go on the INVITE.
 */

/** A `key=value` of sip_headers, before any prefix is applied. */
export interface SipHeaderPair {
  key: string;
  value: string;
}

/** A header field to put on the outbound INVITE. */
export interface SipHeaderField {
  name: string;
  value: string;
}

/**
 * Header names a client may not set through sip_headers; a pair whose key starts with one of
 * the prefixes, or equals one of the names (ignoring case), is dropped without an error. The
 * public service reserves two more prefixes carrying company names that its document does not
 * name; add them to this list when known.
 */
export const RESERVED_SIP_HEADER_PREFIXES: readonly string[] = ['PH-', 'FS-', 'SipAuth', 'ZT-'];
export const RESERVED_SIP_HEADER_NAMES: readonly string[] = ['ClientRegion'];

/** The prefix put before every client header on the outbound INVITE. */
export const SIP_HEADER_PREFIX = 'X-PH-';

export function isReservedSipHeader(key: string): boolean {
  const lower = key.toLowerCase();
  return (
    RESERVED_SIP_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix.toLowerCase())) ||
    RESERVED_SIP_HEADER_NAMES.some((name) => lower === name.toLowerCase())
  );
}

/**
 * The INVITE header fields for the client's pairs: `X-PH-<key>` normally, the bare key when the
 * originating leg used SIP authentication. Reserved names are dropped here too, so pairs from
 * any source are safe to pass.
 */
export function outboundSipHeaders(
  pairs: readonly SipHeaderPair[],
  options: { prefixed: boolean },
): SipHeaderField[] {
  return pairs
    .filter((pair) => !isReservedSipHeader(pair.key))
    .map((pair) => ({
      name: options.prefixed ? SIP_HEADER_PREFIX + pair.key : pair.key,
      value: pair.value,
    }));
}
