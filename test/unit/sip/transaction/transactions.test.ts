import { describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import { InviteClientTransaction } from '../../../../src/sip/transaction/invite-client-transaction.js';
import { InviteServerTransaction } from '../../../../src/sip/transaction/invite-server-transaction.js';
import { NonInviteClientTransaction } from '../../../../src/sip/transaction/non-invite-client-transaction.js';
import { NonInviteServerTransaction } from '../../../../src/sip/transaction/non-invite-server-transaction.js';
import { DEFAULT_TIMERS } from '../../../../src/sip/transaction/timers.js';

/** A wire that records what was sent when, and a TU that records what it was told. */
function harness(reliable = false) {
  const scheduler = new ManualScheduler();
  const sent: [number, string][] = [];
  const events: string[] = [];
  let failing = false;
  const options = {
    scheduler,
    reliable,
    timers: DEFAULT_TIMERS,
    sender: {
      send: (data: Buffer) => {
        if (failing) throw new Error('connection reset');
        sent.push([scheduler.now(), data.toString()]);
      },
    },
  };
  const tu = {
    onResponse: (status: number) => events.push(`response ${status}`),
    onTimeout: () => events.push('timeout'),
    onTransportError: (e: Error) => events.push(`transport error: ${e.message}`),
    onTerminated: () => events.push('terminated'),
  };
  return { scheduler, sent, events, options, tu, fail: () => (failing = true) };
}

const times = (sent: [number, string][], what?: string) =>
  sent.filter(([, d]) => what === undefined || d === what).map(([t]) => t);

describe('INVITE client transaction (RFC 3261 17.1.1, RFC 6026)', () => {
  const ack = () => Buffer.from('ACK');

  it('over UDP retransmits on Timer A, doubling, and times out on Timer B at 64*T1', () => {
    const h = harness();
    const tx = new InviteClientTransaction(h.options, Buffer.from('INVITE'), h.tu, ack);
    tx.start();
    h.scheduler.advance(40_000);
    expect(times(h.sent)).toEqual([0, 500, 1500, 3500, 7500, 15500, 31500]);
    expect(h.events).toEqual(['terminated', 'timeout']);
    expect(tx.state).toBe('terminated');
    expect(h.scheduler.timersPending).toBe(0);
  });

  it('over a reliable transport sends once and still times out at 32 s', () => {
    const h = harness(true);
    new InviteClientTransaction(h.options, Buffer.from('INVITE'), h.tu, ack).start();
    h.scheduler.advance(31_999);
    expect(h.events).toEqual([]);
    h.scheduler.advance(1);
    expect(times(h.sent)).toEqual([0]);
    expect(h.events).toEqual(['terminated', 'timeout']);
  });

  it('stops retransmitting on a provisional response and does not time out in Proceeding', () => {
    const h = harness();
    const tx = new InviteClientTransaction(h.options, Buffer.from('INVITE'), h.tu, ack);
    tx.start();
    h.scheduler.advance(600);
    tx.receiveResponse(180, {});
    h.scheduler.advance(120_000);
    expect(times(h.sent)).toEqual([0, 500]);
    expect(tx.state).toBe('proceeding');
    expect(h.events).toEqual(['response 180']);
  });

  it('ACKs a non-2xx final response, re-ACKs its retransmissions without telling the TU, ends on Timer D', () => {
    const h = harness();
    const tx = new InviteClientTransaction(h.options, Buffer.from('INVITE'), h.tu, ack);
    tx.start();
    tx.receiveResponse(100, {});
    h.scheduler.advance(1000);
    tx.receiveResponse(486, {});
    h.scheduler.advance(1000);
    tx.receiveResponse(486, {});
    expect(h.sent).toEqual([
      [0, 'INVITE'],
      [1000, 'ACK'],
      [2000, 'ACK'],
    ]);
    expect(h.events).toEqual(['response 100', 'response 486']);
    h.scheduler.advance(30_999);
    expect(tx.state).toBe('completed');
    h.scheduler.advance(1);
    expect(tx.state).toBe('terminated');
  });

  it('on a reliable transport ends right after the ACK (Timer D = 0)', () => {
    const h = harness(true);
    const tx = new InviteClientTransaction(h.options, Buffer.from('INVITE'), h.tu, ack);
    tx.start();
    tx.receiveResponse(503, {});
    expect(h.sent.map(([, d]) => d)).toEqual(['INVITE', 'ACK']);
    expect(tx.state).toBe('terminated');
  });

  it('passes 2xx and its retransmissions to the TU in Accepted until Timer M', () => {
    const h = harness();
    const tx = new InviteClientTransaction(h.options, Buffer.from('INVITE'), h.tu, ack);
    tx.start();
    tx.receiveResponse(200, {});
    h.scheduler.advance(500);
    tx.receiveResponse(200, {});
    tx.receiveResponse(486, {});
    expect(tx.state).toBe('accepted');
    h.scheduler.advance(31_500);
    expect(tx.state).toBe('terminated');
    expect(h.events).toEqual(['response 200', 'response 200', 'terminated']);
    expect(h.sent.map(([, d]) => d)).toEqual(['INVITE']);
  });

  it('reports a transport failure and ends', () => {
    const h = harness();
    const tx = new InviteClientTransaction(h.options, Buffer.from('INVITE'), h.tu, ack);
    tx.start();
    h.fail();
    h.scheduler.advance(500);
    expect(h.events).toEqual(['terminated', 'transport error: connection reset']);
    expect(tx.state).toBe('terminated');
    expect(h.scheduler.timersPending).toBe(0);
  });
});

describe('non-INVITE client transaction (RFC 3261 17.1.2)', () => {
  it('retransmits on Timer E doubling up to T2, and times out on Timer F', () => {
    const h = harness();
    new NonInviteClientTransaction(h.options, Buffer.from('OPTIONS'), h.tu).start();
    h.scheduler.advance(40_000);
    expect(times(h.sent)).toEqual([
      0, 500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500,
    ]);
    expect(h.events).toEqual(['terminated', 'timeout']);
  });

  it('retransmits every T2 once a provisional response came', () => {
    const h = harness();
    const tx = new NonInviteClientTransaction(h.options, Buffer.from('REGISTER'), h.tu);
    tx.start();
    h.scheduler.advance(1000);
    tx.receiveResponse(100, {});
    h.scheduler.advance(10_000);
    expect(times(h.sent)).toEqual([0, 500, 1500, 5500, 9500]);
    expect(tx.state).toBe('proceeding');
  });

  it('ignores retransmitted finals in Completed and ends on Timer K (T4), at once when reliable', () => {
    const h = harness();
    const tx = new NonInviteClientTransaction(h.options, Buffer.from('BYE'), h.tu);
    tx.start();
    tx.receiveResponse(200, {});
    tx.receiveResponse(200, {});
    h.scheduler.advance(4999);
    expect(tx.state).toBe('completed');
    h.scheduler.advance(1);
    expect(h.events).toEqual(['response 200', 'terminated']);

    const r = harness(true);
    const reliable = new NonInviteClientTransaction(r.options, Buffer.from('BYE'), r.tu);
    reliable.start();
    reliable.receiveResponse(401, {});
    expect(reliable.state).toBe('terminated');
  });
});

describe('INVITE server transaction (RFC 3261 17.2.1, RFC 6026)', () => {
  it('resends the last provisional for a retransmitted INVITE', () => {
    const h = harness();
    const tx = new InviteServerTransaction(h.options, h.tu);
    tx.respond(100, Buffer.from('100'));
    tx.receiveRequest();
    tx.respond(180, Buffer.from('180'));
    tx.receiveRequest();
    expect(h.sent.map(([, d]) => d)).toEqual(['100', '100', '180', '180']);
  });

  it('retransmits a failure on Timer G up to T2 until Timer H, then times out', () => {
    const h = harness();
    const tx = new InviteServerTransaction(h.options, h.tu);
    tx.respond(486, Buffer.from('486'));
    h.scheduler.advance(40_000);
    expect(times(h.sent)).toEqual([
      0, 500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500,
    ]);
    expect(h.events).toEqual(['terminated', 'timeout']);
  });

  it('stops on the ACK, absorbs ACK retransmissions, ends on Timer I', () => {
    const h = harness();
    const tx = new InviteServerTransaction(h.options, h.tu);
    tx.respond(404, Buffer.from('404'));
    tx.receiveRequest();
    h.scheduler.advance(700);
    tx.receiveAck();
    tx.receiveAck();
    h.scheduler.advance(4999);
    expect(tx.state).toBe('confirmed');
    h.scheduler.advance(1);
    expect(tx.state).toBe('terminated');
    expect(h.sent).toEqual([
      [0, '404'],
      [0, '404'],
      [500, '404'],
    ]);
  });

  it('in Accepted absorbs INVITE retransmissions, sends the TU 2xx retransmissions, ends on Timer L', () => {
    const h = harness();
    const tx = new InviteServerTransaction(h.options, h.tu);
    tx.respond(200, Buffer.from('200'));
    tx.receiveRequest();
    tx.respond(200, Buffer.from('200'));
    expect(h.sent.map(([, d]) => d)).toEqual(['200', '200']);
    expect(() => tx.respond(486, Buffer.from('486'))).toThrow('cannot send 486 in state accepted');
    h.scheduler.advance(32_000);
    expect(tx.state).toBe('terminated');
  });

  it('on a reliable transport sends a failure once, and ends right after the ACK', () => {
    const h = harness(true);
    const tx = new InviteServerTransaction(h.options, h.tu);
    tx.respond(486, Buffer.from('486'));
    h.scheduler.advance(10_000);
    tx.receiveAck();
    expect(times(h.sent)).toEqual([0]);
    expect(tx.state).toBe('terminated');
  });
});

describe('non-INVITE server transaction (RFC 3261 17.2.2)', () => {
  it('absorbs retransmissions in Trying, resends the last response after, ends on Timer J', () => {
    const h = harness();
    const tx = new NonInviteServerTransaction(h.options, h.tu);
    tx.receiveRequest();
    expect(h.sent).toEqual([]);
    tx.respond(100, Buffer.from('100'));
    tx.receiveRequest();
    tx.respond(200, Buffer.from('200'));
    tx.receiveRequest();
    expect(h.sent.map(([, d]) => d)).toEqual(['100', '100', '200', '200']);
    expect(() => tx.respond(500, Buffer.from('500'))).toThrow('cannot send 500 in state completed');
    h.scheduler.advance(31_999);
    expect(tx.state).toBe('completed');
    h.scheduler.advance(1);
    expect(tx.state).toBe('terminated');
  });

  it('ends at once on a reliable transport', () => {
    const h = harness(true);
    const tx = new NonInviteServerTransaction(h.options, h.tu);
    tx.respond(200, Buffer.from('200'));
    expect(tx.state).toBe('terminated');
  });
});
