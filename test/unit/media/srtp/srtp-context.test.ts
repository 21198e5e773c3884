import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { serializeRtpPacket } from '../../../../src/media/rtp/rtp-packet.js';
import { SrtpContext, SrtpProtectError } from '../../../../src/media/srtp/srtp-context.js';
import {
  SRTP_SUITE_PARAMETERS,
  SRTP_SUITES,
  splitDtlsSrtpMaterial,
  splitSrtpKeyAndSalt,
  type SrtpSuite,
} from '../../../../src/media/srtp/srtp-suite.js';

function pair(suite: SrtpSuite): { sender: SrtpContext; receiver: SrtpContext } {
  const { masterKeyLength, masterSaltLength } = SRTP_SUITE_PARAMETERS[suite];
  const keying = {
    suite,
    masterKey: randomBytes(masterKeyLength),
    masterSalt: randomBytes(masterSaltLength),
  };
  return {
    sender: new SrtpContext({ ...keying, direction: 'outbound' }),
    receiver: new SrtpContext({ ...keying, direction: 'inbound' }),
  };
}

/** A 172-byte PCMU packet whose payload says which sequence number it carries. */
function rtp(sequenceNumber: number, ssrc = 0x11223344): Buffer {
  const payload = Buffer.alloc(160, sequenceNumber & 0xff);
  payload.writeUInt16BE(sequenceNumber, 0);
  return serializeRtpPacket({
    marker: false,
    payloadType: 0,
    sequenceNumber,
    timestamp: sequenceNumber * 160,
    ssrc,
    payload,
  });
}

/** An RTP packet with two CSRCs and a one-byte-header extension of two words. */
const withExtension = Buffer.concat([
  Buffer.from('92000007000003e8cafebabe', 'hex'), // V=2, X=1, CC=2, seq 7
  Buffer.from('0000000100000002', 'hex'), // CSRCs
  Buffer.from('bede0002', 'hex'), // extension: profile 0xBEDE, 2 words
  Buffer.from('10ff200102000000', 'hex'),
  Buffer.from('the payload starts here'),
]);
const HEADER_WITH_EXTENSION = 12 + 8 + 4 + 8;

const senderReport = Buffer.from(
  '80c8000611223344' + '00'.repeat(20) + '81ca000311223344' + '0104766f7821',
  'hex',
);

describe('SrtpContext round trips', () => {
  for (const suite of SRTP_SUITES) {
    const { rtpOverhead, rtcpOverhead } = SRTP_SUITE_PARAMETERS[suite];

    it(`${suite}: leaves the header with CSRCs and extension clear, encrypts the payload, and restores it`, () => {
      const { sender, receiver } = pair(suite);
      const srtp = sender.protectRtp(withExtension);
      expect(srtp.length).toBe(withExtension.length + rtpOverhead);
      expect(srtp.subarray(0, HEADER_WITH_EXTENSION)).toEqual(
        withExtension.subarray(0, HEADER_WITH_EXTENSION),
      );
      expect(srtp.subarray(HEADER_WITH_EXTENSION, withExtension.length)).not.toEqual(
        withExtension.subarray(HEADER_WITH_EXTENSION),
      );
      expect(receiver.unprotectRtp(srtp)).toEqual(withExtension);
    });

    it(`${suite}: protects and unprotects a compound RTCP packet (SR + SDES), encrypted`, () => {
      const { sender, receiver } = pair(suite);
      const first = sender.protectRtcp(senderReport);
      const second = sender.protectRtcp(senderReport);
      expect(first.length).toBe(senderReport.length + rtcpOverhead);
      expect(first.subarray(0, 8)).toEqual(senderReport.subarray(0, 8));
      expect(first.subarray(8, senderReport.length)).not.toEqual(senderReport.subarray(8));
      // Each report gets the next SRTCP index, E set.
      const indexAt = suite === 'AEAD_AES_128_GCM' ? first.length - 4 : senderReport.length;
      expect(first.readUInt32BE(indexAt)).toBe(0x80000000);
      expect(second.readUInt32BE(indexAt)).toBe(0x80000001);
      expect(receiver.unprotectRtcp(second)).toEqual(senderReport);
      expect(receiver.unprotectRtcp(first)).toEqual(senderReport);
    });

    it(`${suite}: carries 300 packets across the sequence wrap, reordered around it`, () => {
      const { sender, receiver } = pair(suite);
      const sent = Array.from({ length: 300 }, (_, i) => {
        const seq = (65400 + i) & 0xffff;
        return { seq, srtp: sender.protectRtp(rtp(seq)) };
      });
      // Swap neighbours in groups of four (0123 -> 2301) across the whole run, wrap included.
      const order = sent.map((_, i) => i - (i % 4) + (((i % 4) + 2) % 4));
      const received: number[] = [];
      for (const i of order) {
        const plain = receiver.unprotectRtp(sent[i]!.srtp);
        expect(plain).toEqual(rtp(sent[i]!.seq));
        received.push(sent[i]!.seq);
      }
      expect(received.length).toBe(300);
      expect(receiver.dropped).toEqual({ auth: 0, replay: 0, malformed: 0 });
      // A packet from before the wrap, late but inside the window, is accepted once.
      const { sender: lateSender, receiver: lateReceiver } = pair(suite);
      const before = lateSender.protectRtp(rtp(65530));
      const skipped = lateSender.protectRtp(rtp(65535));
      const after = Array.from({ length: 40 }, (_, i) => lateSender.protectRtp(rtp(i)));
      expect(lateReceiver.unprotectRtp(before)).toEqual(rtp(65530));
      for (const [i, packet] of after.entries())
        expect(lateReceiver.unprotectRtp(packet)).toEqual(rtp(i));
      expect(lateReceiver.unprotectRtp(skipped)).toEqual(rtp(65535));
      expect(lateReceiver.unprotectRtp(skipped)).toBe('replay');
    });
  }
});

describe('SrtpContext replay protection', () => {
  const suite = 'AES_CM_128_HMAC_SHA1_80';

  it('refuses a packet seen already, SRTP and SRTCP', () => {
    const { sender, receiver } = pair(suite);
    const packet = sender.protectRtp(rtp(1000));
    expect(receiver.unprotectRtp(Buffer.from(packet))).toEqual(rtp(1000));
    expect(receiver.unprotectRtp(Buffer.from(packet))).toBe('replay');
    const report = sender.protectRtcp(senderReport);
    expect(receiver.unprotectRtcp(Buffer.from(report))).toEqual(senderReport);
    expect(receiver.unprotectRtcp(Buffer.from(report))).toBe('replay');
    expect(receiver.dropped).toEqual({ auth: 0, replay: 2, malformed: 0 });
  });

  it('accepts reordering within 128 packets and refuses what is older', () => {
    const { sender, receiver } = pair(suite);
    const packets = Array.from({ length: 300 }, (_, i) => sender.protectRtp(rtp(i)));
    const held = new Set([10, 50, 171, 172]);
    for (const [i, packet] of packets.entries()) {
      if (!held.has(i)) expect(receiver.unprotectRtp(packet)).toEqual(rtp(i));
    }
    // Highest is 299: 172 is 127 behind (in the window), 171 is 128 behind (out of it).
    expect(receiver.unprotectRtp(packets[172]!)).toEqual(rtp(172));
    expect(receiver.unprotectRtp(packets[171]!)).toBe('replay');
    expect(receiver.unprotectRtp(packets[50]!)).toBe('replay');
    expect(receiver.unprotectRtp(packets[10]!)).toBe('replay');
    expect(receiver.dropped.replay).toBe(3);
  });

  it('will not protect one sequence number twice (the keystream would repeat)', () => {
    const { sender } = pair(suite);
    sender.protectRtp(rtp(5));
    expect(() => sender.protectRtp(rtp(5))).toThrow(SrtpProtectError);
    expect(() => sender.protectRtp(rtp(5))).toThrow(/index was used already/);
  });

  it('keeps the streams of several SSRCs apart', () => {
    const { sender, receiver } = pair(suite);
    const a = sender.protectRtp(rtp(7, 0xaaaa));
    const b = sender.protectRtp(rtp(7, 0xbbbb));
    expect(receiver.unprotectRtp(a)).toEqual(rtp(7, 0xaaaa));
    expect(receiver.unprotectRtp(b)).toEqual(rtp(7, 0xbbbb));
    expect(receiver.unprotectRtp(a)).toBe('replay');
  });
});

describe('SrtpContext refusals', () => {
  for (const suite of SRTP_SUITES) {
    it(`${suite}: refuses a packet with any bit flipped, or protected under another key`, () => {
      const { sender, receiver } = pair(suite);
      const packet = sender.protectRtp(withExtension);
      let refused = 0;
      for (let byte = 0; byte < packet.length; byte += 3) {
        const tampered = Buffer.from(packet);
        tampered[byte]! ^= 1 << (byte % 8);
        const result = receiver.unprotectRtp(tampered);
        expect(typeof result).toBe('string');
        // The bytes of a refused packet stay as they came.
        expect(tampered[byte]).toBe(packet[byte]! ^ (1 << (byte % 8)));
        refused++;
      }
      expect(receiver.dropped.auth + receiver.dropped.malformed).toBe(refused);
      expect(pair(suite).receiver.unprotectRtp(packet)).toBe('auth');
      // None of that moved the stream: the real packet still goes through.
      expect(receiver.unprotectRtp(packet)).toEqual(withExtension);
    });

    it(`${suite}: refuses every truncation and 4000 random buffers without a crash`, () => {
      const { sender, receiver } = pair(suite);
      const packet = sender.protectRtp(rtp(1));
      const report = sender.protectRtcp(senderReport);
      for (let length = 0; length < packet.length; length++) {
        expect(typeof receiver.unprotectRtp(Buffer.from(packet.subarray(0, length)))).toBe(
          'string',
        );
      }
      for (let length = 0; length < report.length; length++) {
        expect(typeof receiver.unprotectRtcp(Buffer.from(report.subarray(0, length)))).toBe(
          'string',
        );
      }
      for (let i = 0; i < 2000; i++) {
        const junk = randomBytes(i % 300);
        // Half of them look like version 2 packets, so the parsing goes further.
        if (i % 2 === 0 && junk.length > 0) junk[0] = 0x80 | (junk[0]! & 0x3f);
        expect(typeof receiver.unprotectRtp(junk)).toBe('string');
        expect(typeof receiver.unprotectRtcp(Buffer.from(junk))).toBe('string');
      }
      expect(receiver.unprotectRtp(packet)).toEqual(rtp(1));
      expect(receiver.unprotectRtcp(report)).toEqual(senderReport);
    });
  }

  it('counts a packet shorter than its header and tag as malformed', () => {
    const { receiver } = pair('AES_CM_128_HMAC_SHA1_80');
    expect(receiver.unprotectRtp(rtp(1).subarray(0, 20))).toBe('malformed');
    expect(receiver.unprotectRtp(Buffer.from('00'.repeat(40), 'hex'))).toBe('malformed');
    expect(receiver.dropped).toEqual({ auth: 0, replay: 0, malformed: 2 });
  });
});

describe('SrtpContext in place', () => {
  it('protects into room behind the packet and unprotects inside a larger batch', () => {
    const { sender, receiver } = pair('AEAD_AES_128_GCM');
    const batch = Buffer.alloc(1000, 0xee);
    const packet = rtp(42);
    packet.copy(batch, 100);
    const length = sender.protectRtpInPlace(
      batch.subarray(100, 100 + packet.length + 16),
      packet.length,
    );
    expect(length).toBe(packet.length + 16);
    const plain = receiver.unprotectRtp(batch.subarray(100, 100 + length));
    expect(plain).toEqual(packet);
    expect((plain as Buffer).buffer).toBe(batch.buffer);
    expect(batch[99]).toBe(0xee);
    expect(batch[100 + length]).toBe(0xee);
  });

  it('says when there is no room for the tag', () => {
    const { sender } = pair('AES_CM_128_HMAC_SHA1_32');
    const packet = rtp(1);
    expect(() => sender.protectRtpInPlace(packet, packet.length)).toThrow(
      /Expected an integer between 0 and 168 for length but received 172/,
    );
  });
});

describe('SrtpContext arguments and keying', () => {
  it('checks its options and its direction', () => {
    const masterKey = randomBytes(16);
    expect(
      () =>
        new SrtpContext({
          suite: 'AES_CM_128_HMAC_SHA1_80',
          masterKey,
          masterSalt: randomBytes(12),
          direction: 'inbound',
        }),
    ).toThrow(
      'Expected 14 bytes for options.masterSalt with AES_CM_128_HMAC_SHA1_80 but received Buffer of 12',
    );
    expect(
      () =>
        new SrtpContext({
          suite: 'AES_256_CM' as SrtpSuite,
          masterKey,
          masterSalt: randomBytes(14),
          direction: 'inbound',
        }),
    ).toThrow(
      /Expected one of AES_CM_128_HMAC_SHA1_80, .* for options.suite but received "AES_256_CM"/,
    );
    expect(
      () =>
        new SrtpContext({
          suite: 'AES_CM_128_HMAC_SHA1_80',
          masterKey,
          masterSalt: randomBytes(14),
          direction: 'inbound',
          keyDerivation: 'none',
        }),
    ).toThrow(/keyDerivation/);
    const { sender, receiver } = pair('AES_CM_128_HMAC_SHA1_80');
    expect(() => receiver.protectRtp(rtp(1))).toThrow('This SRTP context is inbound');
    expect(() => sender.unprotectRtp(rtp(1))).toThrow('This SRTP context is outbound');
    expect(() => sender.protectRtp('packet' as unknown as Buffer)).toThrow(
      'Expected a Uint8Array or Buffer for packet but received "packet"',
    );
  });

  it('splits SDES key||salt and DTLS-SRTP keying material (RFC 5764 4.2)', () => {
    const inline = Buffer.from('cJOJ7kxQjhFBp2fP6AYjs3vKw7CeBdWZCj0isbJv', 'base64');
    const sdes = splitSrtpKeyAndSalt('AES_CM_128_HMAC_SHA1_80', inline);
    expect(Buffer.concat([sdes.masterKey, sdes.masterSalt])).toEqual(inline);
    expect(sdes.masterSalt.length).toBe(14);
    const material = Buffer.from(Array.from({ length: 56 }, (_, i) => i));
    const { client, server } = splitDtlsSrtpMaterial('AEAD_AES_128_GCM', material);
    expect(client.masterKey).toEqual(material.subarray(0, 16));
    expect(server.masterKey).toEqual(material.subarray(16, 32));
    expect(client.masterSalt).toEqual(material.subarray(32, 44));
    expect(server.masterSalt).toEqual(material.subarray(44, 56));
    expect(() => splitDtlsSrtpMaterial('AES_CM_128_HMAC_SHA1_80', material)).toThrow(
      'Expected 60 bytes of DTLS-SRTP keying material for AES_CM_128_HMAC_SHA1_80 but received 56',
    );
  });
});
