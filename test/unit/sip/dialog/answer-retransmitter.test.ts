import { describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { AnswerRetransmitter } from '../../../../src/sip/dialog/answer-retransmitter.js';

describe('the UAS retransmission of a 2xx (RFC 3261 13.3.1.4)', () => {
  const timers = { t1: 500, t2: 4000, t4: 5000 };

  it('resends at T1 doubling up to T2, and gives up at 64*T1', () => {
    const scheduler = new ManualScheduler();
    const sent: number[] = [];
    let gaveUp = -1;
    const retransmitter = new AnswerRetransmitter(
      scheduler,
      timers,
      () => sent.push(scheduler.now()),
      () => (gaveUp = scheduler.now()),
    );
    retransmitter.start();
    scheduler.advance(40_000);
    expect(sent).toEqual([500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
    expect(gaveUp).toBe(32_000);
    expect(retransmitter.running).toBe(false);
    expect(scheduler.timersPending).toBe(0);
  });

  it('stops when the ACK arrives', () => {
    const scheduler = new ManualScheduler();
    const sent: number[] = [];
    const retransmitter = new AnswerRetransmitter(
      scheduler,
      timers,
      () => sent.push(scheduler.now()),
      () => {
        throw new Error('gave up');
      },
    );
    retransmitter.start();
    scheduler.advance(2000);
    retransmitter.stop();
    scheduler.advance(60_000);
    expect(sent).toEqual([500, 1500]);
    expect(scheduler.timersPending).toBe(0);
  });
});
