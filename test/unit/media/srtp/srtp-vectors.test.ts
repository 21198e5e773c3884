import { createCipheriv } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SrtpContext } from '../../../../src/media/srtp/srtp-context.js';
import { deriveSrtpKey, SrtpLabel } from '../../../../src/media/srtp/srtp-suite.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

describe('RFC 3711 appendix B', () => {
  it('B.2: the AES-CM keystream for session key 2B7E..., salt F0F1...FCFD, SSRC 0, index 0', () => {
    // With SSRC 0 and index 0 the packet IV is the salt * 2^16: the PRF run with label 0.
    const key = hex('2B7E151628AED2A6ABF7158809CF4F3C');
    const salt = hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD');
    const keystream = deriveSrtpKey(key, salt, 0, 0xff02 * 16);
    const block = (counter: number): string =>
      keystream
        .subarray(counter * 16, counter * 16 + 16)
        .toString('hex')
        .toUpperCase();
    expect(block(0x0000)).toBe('E03EAD0935C95E80E166B16DD92B4EB4');
    expect(block(0x0001)).toBe('D23513162B02D0F72A43A2FE4A5F97AB');
    expect(block(0x0002)).toBe('41E95B3BB0A2E8DD477901E4FCA894C0');
    expect(block(0xfeff)).toBe('EC8CDF7398607CB0F2D21675EA9EA1E4');
    expect(block(0xff00)).toBe('362B7C3C6773516318A077D7FC5073AE');
    expect(block(0xff01)).toBe('6A2CC3787889374FBEB4C81B17BA6C44');
  });

  it('B.2: an RTP packet of SSRC 0, sequence 0 is encrypted with that keystream', () => {
    // The same keystream through a context: its session key and salt are derived, so the
    // packet's payload is the zero payload XOR the keystream that the PRF gives for them.
    const masterKey = hex('E1F97A0D3E018BE0D64FA32C06DE4139');
    const masterSalt = hex('0EC675AD498AFEEBB6960B3AABE6');
    const sessionKey = deriveSrtpKey(masterKey, masterSalt, SrtpLabel.rtpEncryption, 16);
    const sessionSalt = deriveSrtpKey(masterKey, masterSalt, SrtpLabel.rtpSalt, 14);
    const context = new SrtpContext({
      suite: 'AES_CM_128_HMAC_SHA1_80',
      masterKey,
      masterSalt,
      direction: 'outbound',
    });
    const packet = Buffer.alloc(12 + 48);
    packet[0] = 0x80;
    const srtp = context.protectRtp(packet);
    expect(srtp.subarray(12, 60).toString('hex')).toBe(
      deriveSrtpKey(sessionKey, sessionSalt, 0, 48).toString('hex'),
    );
  });

  it('B.3: the session keys of master key E1F9..., master salt 0EC6...', () => {
    const masterKey = hex('E1F97A0D3E018BE0D64FA32C06DE4139');
    const masterSalt = hex('0EC675AD498AFEEBB6960B3AABE6');
    expect(deriveSrtpKey(masterKey, masterSalt, SrtpLabel.rtpEncryption, 16).toString('hex')).toBe(
      'c61e7a93744f39ee10734afe3ff7a087',
    );
    expect(deriveSrtpKey(masterKey, masterSalt, SrtpLabel.rtpSalt, 14).toString('hex')).toBe(
      '30cbbc08863d8c85d49db34a9ae1',
    );
    expect(deriveSrtpKey(masterKey, masterSalt, SrtpLabel.rtpAuthentication, 94)).toEqual(
      hex(`CEBE321F6FF7716B6FD4AB49AF256A15 6D38BAA48F0A0ACF3C34E2359E6CDBCE
           E049646C43D9327AD175578EF7227098 6371C10C9A369AC2F94A8C5FBCDDDC25
           6D6E919A48B610EF17C2041E47403576 6B68642C59BBFC2F34DB60DBDFB2`),
    );
  });

  it('protects the libsrtp test driver packet with that master key as libsrtp does', () => {
    const context = new SrtpContext({
      suite: 'AES_CM_128_HMAC_SHA1_80',
      masterKey: hex('E1F97A0D3E018BE0D64FA32C06DE4139'),
      masterSalt: hex('0EC675AD498AFEEBB6960B3AABE6'),
      direction: 'outbound',
    });
    const packet = hex('800f1234decafbadcafebabe' + 'ab'.repeat(16));
    expect(context.protectRtp(packet).toString('hex')).toBe(
      '800f1234decafbadcafebabe4e55dc4ce79978d88ca4d215949d2402b78d6acc99ea179b8dbb',
    );
  });
});

describe('RFC 7714 section 16: AEAD_AES_128_GCM', () => {
  // 16.1 and 16.2 give the session key and salt ("Quid pro quo") directly.
  const keying = {
    suite: 'AEAD_AES_128_GCM',
    masterKey: hex('000102030405060708090a0b0c0d0e0f'),
    masterSalt: hex('517569642070726f2071756f'),
    keyDerivation: 'none',
  } as const;
  const rtp = hex(`8040f17b 8041f8d3 5501a0b2 47616c6c 69612065 7374206f 6d6e6973
                   20646976 69736120 696e2070 61727465 73207472 6573`);
  const srtp = hex(`8040f17b 8041f8d3 5501a0b2 f24de3a3 fb34de6c acba861c 9d7e4bca
                    be633bd5 0d294e6f 42a5f47a 51c7d19b 36de3adf 8833899d 7f27beb1
                    6a9152cf 765ee439 0cce`);
  const rtcp = hex(`81c8000d 4d617273 4e545031 4e545032 52545020 0000042a 0000e930
                    4c756e61 deadbeef deadbeef deadbeef deadbeef deadbeef`);
  const srtcp = hex(`81c8000d 4d617273 63e94885 dcdab67c a727d766 2f6b7e99 7ff5c0f7
                     6c06f32d c676a5f1 730d6fda 4ce09b46 86303ded 0bb9275b c84aa458
                     96cf4d2f c5abf872 45d9eade 800005d4`);

  it('16.1: encrypts the RTP packet of sequence 0xf17b, ROC 0', () => {
    const context = new SrtpContext({ ...keying, direction: 'outbound' });
    expect(context.protectRtp(rtp)).toEqual(srtp);
  });

  it('16.1: decrypts it back, and refuses it with one bit flipped', () => {
    const context = new SrtpContext({ ...keying, direction: 'inbound' });
    const flipped = Buffer.from(srtp);
    flipped[20]! ^= 1;
    expect(context.unprotectRtp(flipped)).toBe('auth');
    expect(flipped[20]).toBe(srtp[20]! ^ 1); // a refused packet is left as it came
    expect(context.unprotectRtp(Buffer.from(srtp))).toEqual(rtp);
  });

  it('16.2: encrypts the sender report with SRTCP index 0x5d4', () => {
    const context = new SrtpContext({ ...keying, direction: 'outbound' });
    // Our SRTCP index starts at 0; step it to the vector's by protecting 0x5d4 reports first.
    for (let i = 0; i < 0x5d4; i++) context.protectRtcp(rtcp);
    expect(context.protectRtcp(rtcp)).toEqual(srtcp);
  });

  it('16.2: decrypts that SRTCP packet', () => {
    const context = new SrtpContext({ ...keying, direction: 'inbound' });
    expect(context.unprotectRtcp(Buffer.from(srtcp))).toEqual(rtcp);
  });

  it('accepts an SRTCP packet sent unencrypted (E = 0): the whole packet is AAD', () => {
    // Built with node:crypto's GCM per RFC 7714 9.3: IV from SSRC and index, AAD = packet ||
    // E || index, the 16-byte tag, then the E || index word.
    const eIndex = hex('000005d4');
    const iv = hex('000000000000000000000000');
    hex('4d617273').copy(iv, 2);
    eIndex.copy(iv, 8);
    for (let i = 0; i < 12; i++) iv[i]! ^= keying.masterSalt[i]!;
    const gcm = createCipheriv('aes-128-gcm', keying.masterKey, iv);
    gcm.setAAD(Buffer.concat([rtcp, eIndex]));
    gcm.final();
    const packet = Buffer.concat([rtcp, gcm.getAuthTag(), eIndex]);
    const context = new SrtpContext({ ...keying, direction: 'inbound' });
    const tampered = Buffer.from(packet);
    tampered[30]! ^= 0x40;
    expect(context.unprotectRtcp(tampered)).toBe('auth');
    expect(context.unprotectRtcp(packet)).toEqual(rtcp);
  });

  it('derives GCM session keys from a 12-byte master salt zero-padded at its end', () => {
    // RFC 7714 has no key derivation vector. RFC 3711 4.3.1 and 4.3.3, written out here with
    // node:crypto: x = label (at byte 7) XOR the salt, zero-padded to 14 bytes; the session
    // salt is the start of AES-CM(master key, IV = x * 2^16).
    const masterKey = hex('000102030405060708090a0b0c0d0e0f');
    const masterSalt = hex('404142434445464748494a4b');
    const x = Buffer.concat([masterSalt, Buffer.alloc(2)]);
    x[7]! ^= SrtpLabel.rtpSalt;
    const iv = Buffer.concat([x, Buffer.alloc(2)]);
    const cipher = createCipheriv('aes-128-ctr', masterKey, iv);
    const expected = cipher.update(Buffer.alloc(12));
    expect(deriveSrtpKey(masterKey, masterSalt, SrtpLabel.rtpSalt, 12)).toEqual(expected);
    // And not the salt an unpadded (or start-padded) 12-byte salt would give.
    const shifted = Buffer.concat([Buffer.alloc(2), masterSalt]);
    shifted[7]! ^= SrtpLabel.rtpSalt;
    const wrong = createCipheriv(
      'aes-128-ctr',
      masterKey,
      Buffer.concat([shifted, Buffer.alloc(2)]),
    );
    expect(deriveSrtpKey(masterKey, masterSalt, SrtpLabel.rtpSalt, 12)).not.toEqual(
      wrong.update(Buffer.alloc(12)),
    );
  });
});
