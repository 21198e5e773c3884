import { randomBytes } from 'node:crypto';

/** An agent's username fragment and password (RFC 8445 5.3, RFC 8839 5.4). */
export interface IceCredentials {
  readonly ufrag: string;
  readonly pwd: string;
}

/** RFC 8839 5.4: ice-char = ALPHA / DIGIT / "+" / "/", exactly base64's alphabet without "=". */
const ICE_CHARS = /^[A-Za-z0-9+/]+$/;

/**
 * Fresh credentials for one ICE session: a ufrag of 8 ice-chars (48 random bits) and a pwd of
 * 24 (144 bits). RFC 8445 5.3: the ufrag MUST carry at least 24 bits of randomness and the
 * password at least 128; RFC 8839 5.4 asks for 4 to 256 and 22 to 256 characters.
 */
export function createIceCredentials(
  random: (size: number) => Buffer = randomBytes,
): IceCredentials {
  return { ufrag: random(6).toString('base64'), pwd: random(18).toString('base64') };
}

/** Checks credentials handed in from outside, with messages that name what is wrong. */
export function checkIceCredentials(credentials: IceCredentials, whose: string): void {
  const { ufrag, pwd } = credentials;
  if (!ICE_CHARS.test(ufrag) || ufrag.length < 4 || ufrag.length > 256) {
    throw new RangeError(
      `Expected 4 to 256 ice-chars for the ${whose} ufrag but received "${ufrag}"`,
    );
  }
  if (!ICE_CHARS.test(pwd) || pwd.length < 22 || pwd.length > 256) {
    throw new RangeError(
      `Expected 22 to 256 ice-chars for the ${whose} pwd but received ${pwd.length} characters`,
    );
  }
}
