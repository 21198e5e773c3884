import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Collection } from '../../../src/state/collection.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import type { OriginationUriRecord } from '../../../src/state/records.js';
import { SealedValueError, SecretBox, parseSecretKey } from '../../../src/state/secret-box.js';

const KEY = Buffer.alloc(32, 7);
const CONTEXT = 'origination_uri\u0000MA1\u0000uri-1\u0000password';

describe('SecretBox', () => {
  it('seals to a self-describing value that opens to the plaintext', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal('Carrier-Pass1 ✓', CONTEXT);
    expect(sealed).toMatch(/^enc:v1:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('Carrier-Pass1');
    expect(SecretBox.isSealed(sealed)).toBe(true);
    expect(box.open(sealed, CONTEXT)).toBe('Carrier-Pass1 ✓');
    // Opens under a new box with the same key (another node, a restart).
    expect(new SecretBox(Buffer.from(KEY)).open(sealed, CONTEXT)).toBe('Carrier-Pass1 ✓');
  });

  it('uses a new nonce for every value', () => {
    const box = new SecretBox(KEY);
    const values = new Set(Array.from({ length: 50 }, () => box.seal('same', CONTEXT)));
    expect(values.size).toBe(50);
  });

  it('refuses a value altered anywhere: nonce, ciphertext or tag', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal('a secret worth keeping', CONTEXT);
    const raw = Buffer.from(sealed.slice('enc:v1:'.length), 'base64url');
    for (const at of [0, 12, raw.length - 1]) {
      const altered = Buffer.from(raw);
      altered[at]! ^= 0x01;
      expect(() => box.open(`enc:v1:${altered.toString('base64url')}`, CONTEXT)).toThrow(
        SealedValueError,
      );
    }
    expect(() => box.open('enc:v1:AAAA', CONTEXT)).toThrow(SealedValueError);
  });

  it('refuses another key, naming what did not open and where the key comes from', () => {
    const sealed = new SecretBox(KEY).seal('a secret', CONTEXT);
    const other = new SecretBox(Buffer.alloc(32, 8));
    expect(() => other.open(sealed, CONTEXT)).toThrow(
      /a stored secret \(origination_uri MA1 uri-1 password\) could not be decrypted: the secret key \(VOXGATE_SECRET_KEY, or secret\.key in the data directory\) is not the one/,
    );
  });

  it('refuses a value moved to another record or field', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal('a secret', CONTEXT);
    expect(() => box.open(sealed, CONTEXT.replace('uri-1', 'uri-2'))).toThrow(SealedValueError);
    expect(() => box.open(sealed, CONTEXT.replace('password', 'username'))).toThrow(
      SealedValueError,
    );
  });

  it('reads a plaintext value written before secrets were sealed as it is', () => {
    const box = new SecretBox(KEY);
    expect(box.open('Legacy-Pass1', CONTEXT)).toBe('Legacy-Pass1');
    expect(SecretBox.isSealed('Legacy-Pass1')).toBe(false);
  });

  it('checks a token against its keyed digest', () => {
    const box = new SecretBox(KEY);
    const token = 'T'.repeat(40);
    const digest = box.digest(token);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(box.matches(token, digest)).toBe(true);
    expect(box.matches(`${token}x`, digest)).toBe(false);
    expect(box.matches(token, '0'.repeat(64))).toBe(false);
    expect(box.matches(token, 'not hex')).toBe(false);
    // Keyed: another key gives another digest, so a digest alone proves nothing elsewhere.
    expect(new SecretBox(Buffer.alloc(32, 8)).digest(token)).not.toBe(digest);
  });

  it('takes a key of exactly 32 bytes', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(
      'Expected a secret key of 32 bytes but received 16',
    );
  });
});

describe('parseSecretKey', () => {
  const key = randomBytes(32);
  it('reads 64 hex digits, base64 and base64url, with surrounding space', () => {
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(` ${key.toString('base64')}\n`)).toEqual(key);
    expect(parseSecretKey(key.toString('base64url'))).toEqual(key);
  });

  it('refuses anything else without repeating it', () => {
    for (const bad of [
      '',
      'abc',
      key.toString('hex').slice(2),
      randomBytes(31).toString('base64'),
    ]) {
      expect(() => parseSecretKey(bad)).toThrow(
        'must be 32 bytes as 64 hex digits or as base64 (e.g. the output of `openssl rand -hex 32`)',
      );
    }
  });
});

describe('a collection with sealed fields', () => {
  const uri = (password: string | null): OriginationUriRecord => ({
    account: 'MA1',
    subaccount: null,
    created: 1,
    uri_uuid: 'uri-1',
    name: null,
    uri: '127.0.0.1:5080',
    authentication_needed: password !== null,
    username: password === null ? null : 'pbx',
    password,
  });

  it('stores them sealed and gives them back in clear; a null stays null', async () => {
    const store = new EmbeddedStore(null);
    const box = new SecretBox(KEY);
    const uris = new Collection<OriginationUriRecord>(
      store,
      { kind: 'origination_uri', id: (u) => u.uri_uuid, sealed: ['password'] },
      box,
    );
    await uris.create(uri('Trunk-Pass1'));
    const raw = await store.get<OriginationUriRecord>('origination_uri', 'MA1', 'uri-1');
    expect(SecretBox.isSealed(raw!.password!)).toBe(true);
    expect(await uris.get('MA1', 'uri-1')).toEqual(uri('Trunk-Pass1'));
    expect((await uris.all('MA1'))[0]).toEqual(uri('Trunk-Pass1'));

    await uris.update(uri(null), uri('Trunk-Pass1'));
    expect(
      (await store.get<OriginationUriRecord>('origination_uri', 'MA1', 'uri-1'))!.password,
    ).toBe(null);
  });

  it('reads a plaintext record and seals it on sealLegacy, once', async () => {
    const store = new EmbeddedStore(null);
    const uris = new Collection<OriginationUriRecord>(
      store,
      { kind: 'origination_uri', id: (u) => u.uri_uuid, sealed: ['password'] },
      new SecretBox(KEY),
    );
    await store.put('origination_uri', 'MA1', 'uri-1', uri('Legacy-Pass1'), {
      score: 1,
      indexes: [],
      unique: [],
    });
    expect((await uris.get('MA1', 'uri-1'))!.password).toBe('Legacy-Pass1');
    expect(await uris.sealLegacy('MA1')).toBe(1);
    const raw = await store.get<OriginationUriRecord>('origination_uri', 'MA1', 'uri-1');
    expect(SecretBox.isSealed(raw!.password!)).toBe(true);
    expect((await uris.get('MA1', 'uri-1'))!.password).toBe('Legacy-Pass1');
    expect(await uris.sealLegacy('MA1')).toBe(0);
  });
});
