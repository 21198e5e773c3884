import { describe, expect, it } from 'vitest';
import { ReceiveStatistics } from '../../../../src/media/rtp/receive-statistics.js';

/** Feeds sequence numbers 20 ms apart with matching PCMU timestamps. */
function feed(stats: ReceiveStatistics, seqs: number[], startMs = 0): string[] {
  return seqs.map((seq, i) => stats.update(seq & 0xffff, (seq * 160) >>> 0, startMs + i * 20));
}

describe('RTP receive statistics (RFC 3550 A.1, A.3, A.8)', () => {
  it('holds a new source on probation until two packets arrive in sequence', () => {
    const stats = new ReceiveStatistics(1, 8000);
    expect(feed(stats, [100])).toEqual(['probation']);
    expect(stats.valid).toBe(false);
    expect(stats.update(101, 101 * 160, 20)).toBe('accepted');
    expect(stats.valid).toBe(true);
    expect(stats.received).toBe(1);
    expect(stats.expected).toBe(1);
  });

  it('restarts probation when the first packets are not in sequence', () => {
    const stats = new ReceiveStatistics(1, 8000);
    expect(feed(stats, [100, 500, 501])).toEqual(['probation', 'probation', 'accepted']);
    expect(stats.extendedHighestSequence).toBe(501);
  });

  it('counts cycles across the 16-bit wraparound', () => {
    const stats = new ReceiveStatistics(1, 8000);
    const seqs = Array.from({ length: 10 }, (_, i) => 65530 + i);
    expect(feed(stats, seqs).slice(1)).toEqual(new Array(9).fill('accepted'));
    // 65530..65539 → the last is 3 after the wrap, with one cycle counted.
    expect(stats.extendedHighestSequence).toBe(65536 + 3);
    expect(stats.expected).toBe(9);
    expect(stats.lost).toBe(0);
  });

  it('counts late packets as received without moving the highest sequence back', () => {
    const stats = new ReceiveStatistics(1, 8000);
    feed(stats, [10, 11, 13, 14, 12]);
    expect(stats.extendedHighestSequence).toBe(14);
    expect(stats.received).toBe(4);
    expect(stats.lost).toBe(0);
  });

  it('resynchronises on two packets in a row after a jump past max_dropout', () => {
    const stats = new ReceiveStatistics(1, 8000);
    feed(stats, [10, 11, 12]);
    expect(stats.update(20_000, 0, 100)).toBe('bad-jump');
    expect(stats.extendedHighestSequence).toBe(12);
    expect(stats.update(20_001, 160, 120)).toBe('accepted');
    expect(stats.extendedHighestSequence).toBe(20_001);
    expect(stats.received).toBe(1);
  });

  it('reports loss and the fraction lost per interval against hand-computed numbers', () => {
    const stats = new ReceiveStatistics(7, 8000);
    // Probation takes 0 and 1; the base becomes 1. Then 2..20 but not 5, 6, 7 nor 15.
    const seqs = [0, 1, ...Array.from({ length: 19 }, (_, i) => i + 2)].filter(
      (s) => ![5, 6, 7, 15].includes(s),
    );
    feed(stats, seqs);
    // expected = 20 - 1 + 1 = 20; received = 20 - 4 = 16.
    expect(stats.expected).toBe(20);
    expect(stats.lost).toBe(4);
    const first = stats.report(1000);
    expect(first).toMatchObject({ ssrc: 7, cumulativeLost: 4, extendedHighestSequence: 20 });
    expect(first.fractionLost).toBe(Math.floor((4 * 256) / 20)); // 51
    // Next interval: 21..30 with 25 lost: 1 of 10.
    feed(stats, [21, 22, 23, 24, 26, 27, 28, 29, 30], 1000);
    const second = stats.report(2000);
    expect(second.cumulativeLost).toBe(5);
    expect(second.fractionLost).toBe(25); // floor(256 / 10)
    // An interval with nothing new reports no loss.
    expect(stats.report(3000).fractionLost).toBe(0);
  });

  it('reports a negative loss as zero fraction when duplicates outnumber losses', () => {
    const stats = new ReceiveStatistics(1, 8000);
    feed(stats, [1, 2, 3, 3, 3, 4]);
    expect(stats.lost).toBe(-2);
    const report = stats.report(0);
    expect(report.fractionLost).toBe(0);
    expect(report.cumulativeLost).toBe(-2);
  });

  it('computes interarrival jitter as J += (|D| - J) / 16', () => {
    const stats = new ReceiveStatistics(1, 8000);
    // Packets every 160 timestamp units (20 ms); arrivals at 0, 20, 50, 60, 80 ms.
    const arrivals = [0, 20, 50, 60, 80];
    arrivals.forEach((ms, i) => stats.update(i, i * 160, ms));
    // D in timestamp units: 0, +80, -80, 0 (transits 0, 0, 80, 0, 0 → |D| 0, 80, 80, 0).
    let j = 0;
    for (const d of [0, 80, 80, 0]) j += (d - j) / 16;
    expect(stats.jitter).toBe(Math.floor(j));
    // 0 → 5 → 9.6875 → 9.08…
    expect(stats.jitter).toBe(9);
  });

  it('takes jitter across a timestamp wrap at 2^32', () => {
    const stats = new ReceiveStatistics(1, 8000);
    const start = 2 ** 32 - 320;
    [0, 1, 2, 3].forEach((i) => stats.update(i, (start + i * 160) >>> 0, i * 20));
    expect(stats.jitter).toBe(0);
  });

  it('fills LSR and DLSR from the last sender report', () => {
    const stats = new ReceiveStatistics(1, 8000);
    feed(stats, [1, 2]);
    stats.senderReportReceived(0x12345678, 1000);
    const report = stats.report(1500);
    expect(report.lastSenderReport).toBe(0x12345678);
    expect(report.delaySinceLastSenderReport).toBe(32768); // half a second in 1/65536 s
  });

  it('clamps cumulative loss to 24-bit signed', () => {
    const stats = new ReceiveStatistics(1, 8000);
    feed(stats, [0, 1]);
    // Jump forward by steps within max_dropout, never receiving the gaps.
    let seq = 1;
    for (let i = 0; i < 3000; i++) {
      seq = (seq + 2999) & 0xffff;
      stats.update(seq, 0, 0);
    }
    expect(stats.lost).toBeGreaterThan(0x7fffff);
    expect(stats.report(0).cumulativeLost).toBe(0x7fffff);
  });
});
