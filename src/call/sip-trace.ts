/** Headers whose values are secrets or proofs of one (RFC 3261 20.7, 20.28; RFC 8898). */
const SECRET_HEADERS = /^(authorization|proxy-authorization)\s*:.*$/gim;

/** SDES keys in an SDP body (RFC 4568 6.1): the SRTP master key and salt, in the clear. */
const SDES_KEYS = /(\binline:)[^|\s;]+/g;

/** A SIP message as text for a trace line, with credentials and SRTP keys replaced. */
export const redactSipSecrets = (message: string): string =>
  message
    .replace(SECRET_HEADERS, (line) => `${line.slice(0, line.indexOf(':'))}: <redacted>`)
    .replace(SDES_KEYS, '$1<redacted>');
