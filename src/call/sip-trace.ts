/** Headers whose values are secrets or proofs of one (RFC 3261 20.7, 20.28; RFC 8898). */
const SECRET_HEADERS = /^(authorization|proxy-authorization)\s*:.*$/gim;

/** A SIP message as text for a trace line, with credentials replaced. */
export const redactSipSecrets = (message: string): string =>
  message.replace(SECRET_HEADERS, (line) => `${line.slice(0, line.indexOf(':'))}: <redacted>`);
