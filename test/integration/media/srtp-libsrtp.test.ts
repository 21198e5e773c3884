import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { serializeRtpPacket } from '../../../src/media/rtp/rtp-packet.js';
import { SrtpContext } from '../../../src/media/srtp/srtp-context.js';
import { splitSrtpKeyAndSalt, type SrtpSuite } from '../../../src/media/srtp/srtp-suite.js';
import { libsrtp, type LibsrtpTag } from '../../support/libsrtp-peer.js';

// libsrtp's srtp_err_status_t values.
const AUTH_FAIL = 7;
const REPLAY_FAIL = 9;
const REPLAY_OLD = 10;

/** A packet of `seq`; every third carries two CSRCs and a header extension. */
function rtp(seq: number, ssrc: number): Buffer {
  const payload = Buffer.alloc(100 + (seq % 73), seq & 0xff);
  payload.writeUInt16BE(seq, 0);
  const plain = serializeRtpPacket({
    marker: seq % 50 === 0,
    payloadType: 111,
    sequenceNumber: seq,
    timestamp: (seq * 960) >>> 0,
    ssrc,
    payload,
  });
  if (seq % 3 !== 0) return plain;
  const header = Buffer.from(plain.subarray(0, 12));
  header[0] = 0x92; // X = 1, CC = 2
  const csrcs = Buffer.from('0000aaaa0000bbbb', 'hex');
  const extension = Buffer.from('bede000110ab0000', 'hex');
  return Buffer.concat([header, csrcs, extension, plain.subarray(12)]);
}

/** A compound report: SR with one report block, then SDES with a CNAME. */
function report(i: number, ssrc: number): Buffer {
  const sr = Buffer.alloc(52);
  sr.writeUInt32BE(0x81c8000c, 0);
  sr.writeUInt32BE(ssrc, 4);
  sr.writeUInt32BE(i, 8);
  sr.fill(i & 0xff, 28);
  const sdes = Buffer.from('81ca0003' + ssrc.toString(16).padStart(8, '0') + '0104766f7821', 'hex');
  return Buffer.concat([sr, sdes]);
}

/** 400 sequence numbers from just before the wrap to past it. */
const SEQUENCES = Array.from({ length: 400 }, (_, i) => (65336 + i) & 0xffff);

for (const [suite, tag] of [
  ['AES_CM_128_HMAC_SHA1_80', 80],
  ['AES_CM_128_HMAC_SHA1_32', 32],
] as [SrtpSuite, LibsrtpTag][]) {
  describe(`SRTP with libsrtp2 as the peer, ${suite}`, () => {
    const keyAndSalt = randomBytes(30);
    const keying = { suite, ...splitSrtpKeyAndSalt(suite, keyAndSalt) };
    const ssrc = 0x5eed0000 + tag;

    it('unprotects 400 RTP packets libsrtp protected across the sequence wrap, reordered', () => {
      const plain = SEQUENCES.map((seq) => rtp(seq, ssrc));
      const protectedByThem = libsrtp('protect', 'rtp', tag, keyAndSalt, plain);
      const receiver = new SrtpContext({ ...keying, direction: 'inbound' });
      // Swap pairs (0 1 2 3 -> 1 0 3 2): every packet arrives out of order, the wrap too.
      for (let i = 0; i < plain.length; i++) {
        const j = i ^ 1;
        expect(receiver.unprotectRtp(protectedByThem[j] as Buffer)).toEqual(plain[j]);
      }
      expect(receiver.dropped).toEqual({ auth: 0, replay: 0, malformed: 0 });
      // libsrtp's packet replayed, and one with a payload byte flipped.
      expect(receiver.unprotectRtp(Buffer.from(protectedByThem[399] as Buffer))).toBe('replay');
      const forged = libsrtp('protect', 'rtp', tag, keyAndSalt, [rtp(500, ssrc)])[0] as Buffer;
      forged[30]! ^= 0x10;
      expect(receiver.unprotectRtp(forged)).toBe('auth');
    });

    it('protects 400 RTP packets across the wrap that libsrtp unprotects', () => {
      const sender = new SrtpContext({ ...keying, direction: 'outbound' });
      const plain = SEQUENCES.map((seq) => rtp(seq, ssrc));
      const ours = plain.map((packet) => sender.protectRtp(packet));
      expect(ours[0]!.length).toBe(plain[0]!.length + tag / 8);
      // Ours again at the end: libsrtp must call the first one replayed, the next too old.
      const results = libsrtp('unprotect', 'rtp', tag, keyAndSalt, [...ours, ours[399]!, ours[0]!]);
      expect(results.slice(0, 400)).toEqual(plain);
      expect(results.slice(400)).toEqual([{ status: REPLAY_FAIL }, { status: REPLAY_OLD }]);
      // And a forged one of ours.
      const forged = Buffer.from(ours[5]!);
      forged[forged.length - 1]! ^= 1;
      expect(libsrtp('unprotect', 'rtp', tag, keyAndSalt, [forged])).toEqual([
        { status: AUTH_FAIL },
      ]);
    });

    it('unprotects SRTCP libsrtp protected, and protects SRTCP libsrtp unprotects', () => {
      const reports = Array.from({ length: 50 }, (_, i) => report(i, ssrc));
      const theirs = libsrtp('protect', 'rtcp', tag, keyAndSalt, reports);
      // SRTCP's tag is 80 bits in both suites; the E flag and index word come before it.
      expect((theirs[0] as Buffer).length).toBe(reports[0]!.length + 4 + 10);
      const receiver = new SrtpContext({ ...keying, direction: 'inbound' });
      for (let i = theirs.length - 1; i >= 0; i--) {
        expect(receiver.unprotectRtcp(theirs[i] as Buffer)).toEqual(reports[i]);
      }
      expect(receiver.unprotectRtcp(theirs[10] as Buffer)).toBe('replay');

      const sender = new SrtpContext({ ...keying, direction: 'outbound' });
      const ours = reports.map((packet) => sender.protectRtcp(packet));
      // A report not delivered yet, one ciphertext bit flipped.
      const tampered = sender.protectRtcp(report(50, ssrc));
      tampered[12]! ^= 0x80;
      const results = libsrtp('unprotect', 'rtcp', tag, keyAndSalt, [...ours, ours[49]!, tampered]);
      expect(results.slice(0, 50)).toEqual(reports);
      expect(results.slice(50)).toEqual([{ status: REPLAY_FAIL }, { status: AUTH_FAIL }]);
    });
  });
}
