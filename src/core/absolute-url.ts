/** The schemes of URLs the gateway fetches (answer, hangup, callbacks, media). */
export const HTTP_PROTOCOLS = ['http:', 'https:'] as const;
/** The schemes of URLs an audio stream connects to. */
export const WEBSOCKET_PROTOCOLS = ['ws:', 'wss:'] as const;

/** Longest URL a request or an answer document may name. */
export const MAX_URL_LENGTH = 2048;

/**
 * `scheme://authority` at the start of a URL (RFC 3986 3: hier-part = "//" authority
 * path-abempty); the authority ends at the first `/`, `?` or `#`.
 */
const SCHEME_AND_AUTHORITY = /^([A-Za-z][A-Za-z0-9+.-]*:)\/\/([^/?#]*)/;
/** Whitespace and control characters: the WHATWG parser drops some of them without a word. */
const SPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/;

/**
 * Whether `text` is an absolute URL with one of `protocols` (`['http:', 'https:']`) and a host,
 * as RFC 3986 writes one and as the WHATWG parser the gateway fetches with reads it. The one
 * rule every URL a client gives (REST parameters, answer XML) is held to, so that a URL one
 * resource takes another does not refuse. Both readings are needed: WHATWG alone reads
 * `http:///x` as the host `x` and `http:x` as `http://x/`; the RFC's grammar alone lets
 * `http://[::1` (an unclosed IPv6 literal) or `http://a b/` through.
 */
export function isAbsoluteUrl(text: string, protocols: readonly string[]): boolean {
  if (text.length > MAX_URL_LENGTH || SPACE_OR_CONTROL.test(text)) return false;
  const head = SCHEME_AND_AUTHORITY.exec(text);
  if (!head) return false;
  const scheme = head[1]!.toLowerCase();
  // The host is what the authority holds between its userinfo and its port.
  const host = head[2]!.replace(/^[^@]*@/, '').replace(/:[0-9]*$/, '');
  if (!protocols.includes(scheme) || host === '') return false;
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return false;
  }
  return parsed.protocol === scheme && parsed.hostname !== '';
}
