import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/** The prefix of a sealed value; a stored value without it is a legacy plaintext one. */
const SEALED_PREFIX = 'enc:v1:';
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Keeps the secrets the gateway stores (auth tokens, SIP digests, trunk passwords, chat-app
 * tokens) unreadable to whoever reads the state store without the secret key. A value is
 * sealed with AES-256-GCM under a random nonce and stored as `enc:v1:<base64url of nonce,
 * ciphertext and tag>`; `context` (what the value is: kind, tenant, id and field) is
 * authenticated with it, so a sealed value moved to another record or field does not open.
 * Auth tokens also get a keyed digest (HMAC-SHA256), so a presented token is checked in
 * constant time against a value of fixed length. Both keys are derived from the one secret
 * key with HKDF, each for its own use.
 */
export class SecretBox {
  readonly #sealKey: Buffer;
  readonly #digestKey: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) {
      throw new Error(`Expected a secret key of ${KEY_BYTES} bytes but received ${key.length}`);
    }
    this.#sealKey = derive(key, 'voxgate secrets at rest: aes-256-gcm v1');
    this.#digestKey = derive(key, 'voxgate auth token digest: hmac-sha256 v1');
  }

  /** A box with a key of its own, for a store that lives no longer than the process. */
  static random(): SecretBox {
    return new SecretBox(randomBytes(KEY_BYTES));
  }

  /** Whether a stored value is sealed (as opposed to plaintext left by an older version). */
  static isSealed(stored: string): boolean {
    return stored.startsWith(SEALED_PREFIX);
  }

  seal(plain: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#sealKey, nonce);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  /**
   * The plaintext of a sealed value; a value without the prefix is returned as it is (written
   * before secrets were sealed). Throws when the value does not open under this key and
   * context: another key, or an altered value.
   */
  open(stored: string, context: string): string {
    if (!SecretBox.isSealed(stored)) return stored;
    const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw new SealedValueError(context);
    const decipher = createDecipheriv('aes-256-gcm', this.#sealKey, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    try {
      const body = raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedValueError(context);
    }
  }

  /** The keyed digest of a secret, hex: what is stored to check it later. */
  digest(plain: string): string {
    return createHmac('sha256', this.#digestKey).update(plain, 'utf8').digest('hex');
  }

  /** Whether `presented` is the secret whose digest is `digest`, in constant time. */
  matches(presented: string, digest: string): boolean {
    const actual = Buffer.from(this.digest(presented), 'hex');
    const expected = Buffer.from(digest, 'hex');
    return expected.length === actual.length && timingSafeEqual(actual, expected);
  }
}

/** A sealed value that does not open: the key is not the one it was sealed with, or it was altered. */
export class SealedValueError extends Error {
  constructor(context: string) {
    super(
      `a stored secret (${context.replaceAll('\u0000', ' ')}) could not be decrypted: the secret ` +
        'key (VOXGATE_SECRET_KEY, or secret.key in the data directory) is not the one it was ' +
        'encrypted with, or the stored value was altered',
    );
    this.name = 'SealedValueError';
  }
}

/**
 * Reads a secret key given as 64 hex digits or as base64 of 32 bytes; throws an Error saying
 * what is wrong, never repeating the value.
 */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const key = Buffer.from(
      trimmed,
      trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64',
    );
    if (key.length === KEY_BYTES) return key;
  }
  throw new Error(
    `must be ${KEY_BYTES} bytes as 64 hex digits or as base64 (e.g. the output of \`openssl rand -hex 32\`)`,
  );
}

/** 32 random bytes as hex: a new secret key. */
export function newSecretKeyText(): string {
  return randomBytes(KEY_BYTES).toString('hex');
}

function derive(key: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, KEY_BYTES));
}
