/**
 * An Authorization header read as RFC 7235 2.1 writes it: `auth-scheme [ 1*SP ( token68 /
 * #auth-param ) ]`. The scheme comes back lower-cased: "It uses a case-insensitive token as a
 * means to identify the authentication scheme", so `basic`, `Basic` and `BASIC` are one.
 */
export function authorizationOf(
  header: string | undefined,
): { scheme: string; credentials: string } | null {
  const match = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:[ \t]+(.*?))?\s*$/.exec(header ?? '');
  if (!match) return null;
  return { scheme: match[1]!.toLowerCase(), credentials: match[2] ?? '' };
}

/**
 * The user id and password of `Basic` credentials (RFC 7617 2: the base64 of `user-id ":"
 * password`, the user id without a colon), or null when the header holds none.
 */
export function basicCredentials(
  header: string | undefined,
): { user: string; password: string } | null {
  const authorization = authorizationOf(header);
  if (authorization?.scheme !== 'basic') return null;
  if (!/^[A-Za-z0-9+/]+=*$/.test(authorization.credentials)) return null;
  const decoded = Buffer.from(authorization.credentials, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The token of `Bearer` credentials (RFC 6750 2.1), or null when the header holds none. */
export function bearerToken(header: string | undefined): string | null {
  const authorization = authorizationOf(header);
  if (authorization?.scheme !== 'bearer' || authorization.credentials === '') return null;
  return authorization.credentials;
}
