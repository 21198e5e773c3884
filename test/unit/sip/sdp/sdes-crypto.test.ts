import { describe, expect, it } from 'vitest';
import { formatCrypto, parseCrypto, unusableCrypto } from '../../../../src/sip/sdp/sdes-crypto.js';
import { SdpParseError, SdpSession } from '../../../../src/sip/sdp/index.js';
import { sdp } from './sdp-fixtures.js';

/** 30 bytes 0x00..0x1d: a key and salt whose base64 is easy to check by eye. */
const KEY = Buffer.from(Array.from({ length: 30 }, (_, i) => i));
const KEY_B64 = KEY.toString('base64');

/** An SDES offer as a SIP phone over TLS sends it: two suites, its preferred first. */
function savpOffer(cryptoLines: string[], protocol = 'RTP/SAVP'): string {
  return sdp(`
v=0
o=phone 1 1 IN IP4 192.0.2.20
s=-
c=IN IP4 192.0.2.20
t=0 0
m=audio 40000 ${protocol} 0 101
a=rtpmap:0 PCMU/8000
a=rtpmap:101 telephone-event/8000
${[...cryptoLines, 'a=sendrecv'].join('\n')}
`);
}

describe('a=crypto (RFC 4568)', () => {
  it('reads a line with its tag, suite, key and salt, lifetime and MKI', () => {
    const crypto = parseCrypto(`crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_B64}|2^20|1:4`);
    expect(crypto).toMatchObject({
      tag: 1,
      suite: 'AES_CM_128_HMAC_SHA1_80',
      keyCount: 1,
      lifetime: '2^20',
      mki: { value: 1, length: 4 },
      sessionParams: [],
    });
    expect(crypto.keySalt).toEqual(KEY);
    // An MKI means packets carry one, which voxgate's SRTP does not: the line is passed over.
    expect(unusableCrypto(crypto)).toBe('an MKI is not supported');
  });

  it('writes what it reads back, 40 base64 characters without padding', () => {
    const line = formatCrypto({ tag: 7, suite: 'AES_CM_128_HMAC_SHA1_32', keySalt: KEY });
    expect(line).toBe(`crypto:7 AES_CM_128_HMAC_SHA1_32 inline:${KEY_B64}`);
    expect(KEY_B64).toHaveLength(40);
    const back = parseCrypto(line);
    expect(back).toMatchObject({ tag: 7, suite: 'AES_CM_128_HMAC_SHA1_32', lifetime: null });
    expect(back.keySalt).toEqual(KEY);
    expect(unusableCrypto(back)).toBeNull();
  });

  it('takes a decimal lifetime and KDR=0, and refuses other session parameters', () => {
    const line = `crypto:2 AES_CM_128_HMAC_SHA1_80 inline:${KEY_B64}|1048576`;
    expect(unusableCrypto(parseCrypto(`${line} KDR=0`))).toBeNull();
    expect(unusableCrypto(parseCrypto(`${line} UNENCRYPTED_SRTP`))).toBe(
      'session parameter UNENCRYPTED_SRTP is not supported',
    );
  });

  it('names the wrong key length and the unknown suite without the key', () => {
    const short = KEY.subarray(0, 20).toString('base64');
    const reason = unusableCrypto(parseCrypto(`crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${short}`));
    expect(reason).toBe('AES_CM_128_HMAC_SHA1_80 takes 30 bytes of key and salt, not 20');
    expect(unusableCrypto(parseCrypto(`crypto:1 F8_128_HMAC_SHA1_80 inline:${KEY_B64}`))).toBe(
      'suite F8_128_HMAC_SHA1_80 is not one of AES_CM_128_HMAC_SHA1_80, AES_CM_128_HMAC_SHA1_32',
    );
  });

  it.each([
    ['no key parameter', 'crypto:1 AES_CM_128_HMAC_SHA1_80'],
    ['a tag of ten digits', `crypto:1234567890 AES_CM_128_HMAC_SHA1_80 inline:${KEY_B64}`],
    ['a key method other than inline', `crypto:1 AES_CM_128_HMAC_SHA1_80 uri:${KEY_B64}`],
    ['characters outside base64', 'crypto:1 AES_CM_128_HMAC_SHA1_80 inline:abc$def'],
    ['stray bits in the last character', 'crypto:1 AES_CM_128_HMAC_SHA1_80 inline:QUJDRF'],
    ['a bad lifetime', `crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_B64}|2^x`],
  ])('refuses %s', (_, value) => {
    expect(() => parseCrypto(value)).toThrow(SdpParseError);
  });
});

describe('SDES offer/answer', () => {
  const session = (sdes?: 'required' | 'optional') =>
    new SdpSession({ address: '192.0.2.1', port: 30000, ...(sdes && { sdes }) });

  it('answers the first usable line with its tag and a fresh key of its own', () => {
    const bad = KEY.subarray(0, 16).toString('base64');
    const offer = savpOffer([
      `a=crypto:1 AES_256_CM_HMAC_SHA1_80 inline:${KEY_B64}${KEY_B64}`,
      `a=crypto:2 AES_CM_128_HMAC_SHA1_80 inline:${bad}`,
      `a=crypto:3 AES_CM_128_HMAC_SHA1_32 inline:${KEY_B64}`,
      `a=crypto:4 AES_CM_128_HMAC_SHA1_80 inline:${KEY_B64}`,
    ]);
    const outcome = session('optional').answer(offer);
    if (!outcome.ok) throw new Error(outcome.reason);
    const lines = outcome.sdp.split('\r\n');
    expect(lines).toContain('m=audio 30000 RTP/SAVP 0 101');
    const cryptos = lines.filter((l) => l.startsWith('a=crypto:'));
    expect(cryptos).toHaveLength(1);
    expect(cryptos[0]).toMatch(/^a=crypto:3 AES_CM_128_HMAC_SHA1_32 inline:[A-Za-z0-9+/]{40}$/);
    const ours = parseCrypto(cryptos[0]!.slice(2)).keySalt;
    expect(ours.equals(KEY)).toBe(false);
    expect(outcome.audio.sdes).toMatchObject({ suite: 'AES_CM_128_HMAC_SHA1_32', tag: 3 });
    expect(Buffer.from(outcome.audio.sdes!.remoteKeySalt)).toEqual(KEY);
    expect(Buffer.from(outcome.audio.sdes!.localKeySalt)).toEqual(ours);
  });

  it('refuses an RTP/SAVP offer none of whose lines it can use, naming each', () => {
    const offer = savpOffer([
      `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${KEY.subarray(0, 20).toString('base64')}`,
      'a=crypto:2 AES_CM_128_HMAC_SHA1_80 inline:not*base64',
    ]);
    const outcome = session('optional').answer(offer);
    expect(outcome).toEqual({
      ok: false,
      status: 488,
      reason:
        'no usable a=crypto line (a=crypto:1: AES_CM_128_HMAC_SHA1_80 takes 30 bytes of key and salt, not 20; ' +
        'SDP line 10: a=crypto key parameter must be inline: with base64 key and salt, then lifetime and MKI)',
    });
  });

  it('refuses RTP/SAVP on a leg without SDES, and plain RTP on one that requires it', () => {
    const offer = savpOffer([`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_B64}`]);
    expect(session().answer(offer)).toMatchObject({
      ok: false,
      reason: 'the offer has no RTP/AVP audio stream',
    });
    expect(session('required').answer(savpOffer([], 'RTP/AVP'))).toMatchObject({
      ok: false,
      reason: 'the offer has no RTP/SAVP (SRTP is required on this leg) audio stream',
    });
    const plain = session('optional').answer(savpOffer([], 'RTP/AVP'));
    expect(plain.ok && plain.audio.sdes).toBeUndefined();
  });

  it('offers RTP/SAVP with both suites when required, plain RTP/AVP when optional', () => {
    expect(session('optional').createOffer()).toMatch(/^m=audio 30000 RTP\/AVP /m);
    const required = session('required');
    const offer = required.createOffer();
    expect(offer).toMatch(/^m=audio 30000 RTP\/SAVP 0 8 101\r$/m);
    const lines = offer.split('\r\n').filter((l) => l.startsWith('a=crypto:'));
    expect(lines.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([
      'a=crypto:1 AES_CM_128_HMAC_SHA1_80',
      'a=crypto:2 AES_CM_128_HMAC_SHA1_32',
    ]);
    const ours = parseCrypto(lines[0]!.slice(2)).keySalt;
    const answer = savpOffer([`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_B64}`]);
    const reading = required.readAnswer(answer);
    if (!reading.ok) throw new Error(reading.reason);
    expect(reading.audio.sdes!.suite).toBe('AES_CM_128_HMAC_SHA1_80');
    expect(Buffer.from(reading.audio.sdes!.remoteKeySalt)).toEqual(KEY);
    expect(Buffer.from(reading.audio.sdes!.localKeySalt)).toEqual(ours);
    // A re-offer keeps the session's keys.
    expect(required.createOffer()).toContain(lines[0]);
  });

  it('refuses an answer that drops to RTP/AVP, changes the suite or carries no key', () => {
    const cases: [string, string][] = [
      [savpOffer([], 'RTP/AVP'), 'the answer has RTP/AVP where the offer had RTP/SAVP'],
      [
        savpOffer([`a=crypto:1 AES_CM_128_HMAC_SHA1_32 inline:${KEY_B64}`]),
        "the answer's a=crypto:1 AES_CM_128_HMAC_SHA1_32 was not offered",
      ],
      [savpOffer([]), 'the answer has 0 a=crypto lines, not one'],
    ];
    for (const [answer, message] of cases) {
      const offerer = session('required');
      offerer.createOffer();
      expect(() => offerer.readAnswer(answer)).toThrow(message);
    }
  });
});
