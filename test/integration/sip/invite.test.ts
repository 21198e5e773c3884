import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemScheduler } from '../../../src/core/scheduler.js';
import { DigestAuthenticator } from '../../../src/sip/auth/digest-authenticator.js';
import { digestHash } from '../../../src/sip/auth/digest.js';
import type { DialogEnd } from '../../../src/sip/dialog/dialog-delegate.js';
import { SipRequest, SipResponse } from '../../../src/sip/message/index.js';
import type { SipMetrics } from '../../../src/sip/transaction/sip-metrics.js';
import type { IncomingInvite } from '../../../src/sip/ua/incoming-invite.js';
import type { InviteProgress } from '../../../src/sip/ua/outgoing-invite.js';
import { RawUdpPeer } from '../../support/sip-client.js';
import { TEST_TIMERS, openSipPeer, type SipPeer } from '../../support/sip-peer.js';
import { sleep, until } from '../../support/wait.js';

/** Short timers: 64*T1 is 1.28 s. */
const TIMERS = TEST_TIMERS;

const OFFER =
  'v=0\r\no=a 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';
const ANSWER = OFFER.replace('o=a', 'o=b').replace('4000', '5000');

interface Peer extends SipPeer {
  /** 2xx retransmissions this stack sent. */
  retransmitted2xx: () => number;
}

async function openPeer(): Promise<Peer> {
  let retransmitted = 0;
  const ignore = () => {};
  const metrics: SipMetrics = {
    requestReceived: ignore,
    requestSent: ignore,
    responseReceived: ignore,
    responseSent: ignore,
    retransmissionReceived: ignore,
    retransmissionSent: (method) => {
      if (method === '2xx') retransmitted++;
    },
  };
  const peer = await openSipPeer({ timers: TIMERS, metrics });
  return { ...peer, retransmitted2xx: () => retransmitted };
}

/** A promise with its resolve, for events. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

let a: Peer;
let b: Peer;

beforeAll(async () => {
  [a, b] = await Promise.all([openPeer(), openPeer()]);
});

afterAll(async () => {
  await Promise.all([a.stack.close(), b.stack.close()]);
});

afterEach(() => {
  a.uas.onInvite = null;
  b.uas.onInvite = null;
});

const callTo = (peer: Peer, user = 'bob') => `sip:${user}@127.0.0.1:${peer.port}`;

describe('a call between two stacks over UDP', () => {
  it('INVITE, 180, 200, ACK, then the caller hangs up with BYE', async () => {
    const confirmed = deferred<SipRequest>();
    const calleeEnded = deferred<DialogEnd>();
    let incoming: IncomingInvite | null = null;
    b.uas.onInvite = (invite) => {
      incoming = invite;
      invite.delegate = { onConfirmed: (ack) => confirmed.resolve(ack) };
      invite.ring();
      setTimeout(() => {
        const dialog = invite.answer(ANSWER);
        dialog.delegate = { onTerminated: (end) => calleeEnded.resolve(end) };
      }, 10);
    };
    const progress: InviteProgress[] = [];
    const call = a.uac.invite({
      target: callTo(b),
      from: 'sip:alice@example.com',
      fromDisplayName: 'Alice Example',
      sdp: OFFER,
      headers: [['X-Call-Ref', 'abc-123']],
      callId: 'call-one@test',
      delegate: { onProgress: (p) => progress.push(p) },
    });
    const outcome = await call.outcome;
    expect(outcome.answered).toBe(true);
    if (!outcome.answered) return;
    expect(outcome.sdp).toBe(ANSWER);
    expect(progress.map((p) => p.status)).toEqual([180]);
    expect(progress[0]!.dialog?.state).toBe('confirmed');
    const ack = await confirmed.promise;
    expect(ack.method).toBe('ACK');
    expect(ack.cseq().seq).toBe(call.request!.cseq().seq);

    const request = incoming!.request;
    expect(request.headers.get('X-Call-Ref')).toBe('abc-123');
    expect(request.callId()).toBe('call-one@test');
    expect(request.from().displayName).toBe('Alice Example');
    expect(request.contact()).toMatchObject([{ uri: { host: '127.0.0.1', port: a.port } }]);
    expect(incoming!.offer).toBe(OFFER);
    expect(incoming!.state).toBe('confirmed');

    const callerDialog = outcome.dialog;
    const calleeDialog = incoming!.dialog!;
    expect(callerDialog.id).toBe(
      `call-one@test|${calleeDialog.remoteTag}|${calleeDialog.localTag}`,
    );
    expect(callerDialog.remoteTarget).toBe(`sip:127.0.0.1:${b.port}`);
    expect(calleeDialog.remoteSdp).toBe(OFFER);
    expect(b.dialogs.size).toBe(1);

    const bye = await callerDialog.bye();
    expect(bye?.status).toBe(200);
    expect(await calleeEnded.promise).toEqual({ kind: 'bye', by: 'remote' });
    expect(callerDialog.state).toBe('terminated');
    expect(a.dialogs.size).toBe(0);
    expect(b.dialogs.size).toBe(0);
  });

  it('lets the callee side go of the INVITE it answered while its transaction lingers', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const calleeEnded = deferred<DialogEnd>();
    let received: WeakRef<SipRequest> | null = null;
    b.uas.onInvite = (invite) => {
      received = new WeakRef(invite.request);
      const dialog = invite.answer(ANSWER);
      dialog.delegate = { onTerminated: (end) => calleeEnded.resolve(end) };
    };
    const outcome = await a.uac.invite({ target: callTo(b), from: 'sip:a@test', sdp: OFFER })
      .outcome;
    if (!outcome.answered) throw new Error('expected an answer');
    await outcome.dialog.bye();
    await calleeEnded.promise;
    // RFC 6026 Timer L keeps the INVITE's server transaction (and Timer J the BYE's) to absorb
    // retransmissions; they answer those from the bytes they sent, not from the request.
    expect(b.stack.transactions.liveServerTransactions).toBeGreaterThan(0);
    for (let i = 0; i < 5 && received!.deref() !== undefined; i++) {
      await sleep(10);
      gc();
    }
    expect(received!.deref()).toBeUndefined();
  });

  it('the other way round, and the callee hangs up', async () => {
    const callerEnded = deferred<DialogEnd>();
    a.uas.onInvite = (invite) => {
      invite.delegate = {
        onConfirmed: () => void invite.hangup(),
      };
      invite.answer(ANSWER);
    };
    const outcome = await b.uac.invite({
      target: callTo(a, 'alice'),
      from: 'sip:bob@example.com',
      sdp: OFFER,
      delegate: {
        onAnswered: ({ dialog }) => {
          dialog.delegate = { onTerminated: (end) => callerEnded.resolve(end) };
        },
      },
    }).outcome;
    expect(outcome.answered).toBe(true);
    expect(await callerEnded.promise).toEqual({ kind: 'bye', by: 'remote' });
    await until(() => a.dialogs.size === 0 && b.dialogs.size === 0);
  });

  it('surfaces 183 with early media SDP, then a rejection with its status and reason', async () => {
    b.uas.onInvite = (invite) => {
      invite.progress(ANSWER);
      setTimeout(() => invite.reject(486, 'Busy Here Today'), 10);
    };
    const progress: InviteProgress[] = [];
    const outcome = await a.uac.invite({
      target: callTo(b),
      from: 'sip:alice@example.com',
      sdp: OFFER,
      delegate: { onProgress: (p) => progress.push(p) },
    }).outcome;
    expect(progress).toHaveLength(1);
    expect(progress[0]).toMatchObject({ status: 183, sdp: ANSWER });
    expect(progress[0]!.dialog?.state).toBe('terminated');
    expect(outcome).toMatchObject({
      answered: false,
      failure: { kind: 'rejected', status: 486, reason: 'Busy Here Today' },
    });
    expect(a.dialogs.size).toBe(0);
    await until(() => b.dialogs.size === 0);
  });

  it('CANCEL before the answer: the callee hears of it, the INVITE gets 487 and its ACK', async () => {
    const cancelled = deferred();
    let incoming: IncomingInvite | null = null;
    b.uas.onInvite = (invite) => {
      incoming = invite;
      invite.delegate = { onCancelled: () => cancelled.resolve() };
      invite.ring();
    };
    const call = a.uac.invite({
      target: callTo(b),
      from: 'sip:alice@example.com',
      sdp: OFFER,
      delegate: { onProgress: () => call.cancel() },
    });
    const outcome = await call.outcome;
    await cancelled.promise;
    expect(outcome.answered).toBe(false);
    if (outcome.answered) return;
    expect(outcome.failure).toMatchObject({ kind: 'cancelled', status: 487 });
    expect(outcome.failure.kind === 'cancelled' && outcome.failure.response?.status).toBe(487);
    expect(incoming!.state).toBe('cancelled');
    // RFC 3261 17.2.1: the ACK of the 487 moves the server transaction out of Completed.
    await until(() => incoming!.transaction.state !== 'completed');
    expect(['confirmed', 'terminated']).toContain(incoming!.transaction.state);
    expect(a.dialogs.size).toBe(0);
    expect(b.dialogs.size).toBe(0);
  });

  it('a cancel() before the INVITE leaves sends nothing', async () => {
    let invited = false;
    b.uas.onInvite = () => (invited = true);
    const call = a.uac.invite({ target: callTo(b), from: 'sip:alice@example.com', sdp: OFFER });
    call.cancel();
    expect((await call.outcome).answered).toBe(false);
    expect(call.state).toBe('failed');
    await sleep(50);
    expect(invited).toBe(false);
  });

  it('retransmits the 2xx until the ACK and no longer (counted by the metrics hook)', async () => {
    // The caller's ACK goes out at once, so the callee's stack never needs to retransmit.
    const confirmed = deferred();
    b.uas.onInvite = (invite) => {
      invite.delegate = { onConfirmed: () => confirmed.resolve() };
      invite.answer(ANSWER);
    };
    const before = b.retransmitted2xx();
    const outcome = await a.uac.invite({
      target: callTo(b),
      from: 'sip:alice@example.com',
      sdp: OFFER,
    }).outcome;
    await confirmed.promise;
    await sleep(8 * TIMERS.t1);
    expect(b.retransmitted2xx()).toBe(before);
    if (outcome.answered) await outcome.dialog.bye();
  });
});

describe('digest authentication of the INVITE', () => {
  const authenticator = new DigestAuthenticator({
    realm: 'voxgate.test',
    secret: Buffer.from('0123456789abcdef0123456789abcdef'),
    clock: systemScheduler,
  });
  const secret = {
    ha1: (algorithm: 'MD5' | 'SHA-256') =>
      digestHash(algorithm, 'alice:voxgate.test:correct horse'),
  };

  /** The callee challenges every INVITE without valid credentials with a 401 (or a 407). */
  function challengingCallee(status: 401 | 407 = 401): { challenged: () => number } {
    let challenged = 0;
    b.uas.onInvite = (invite) => {
      const credentials =
        status === 401 ? invite.request.authorization()[0] : invite.request.proxyAuthorization()[0];
      const header = status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate';
      const challenge = () => {
        challenged++;
        invite.reject(
          status,
          undefined,
          authenticator.challenges().map((value) => [header, value] as const),
        );
      };
      if (!credentials) {
        challenge();
        return;
      }
      void authenticator
        .verify(credentials.params, invite.request, async (user) =>
          user === 'alice' ? secret : null,
        )
        .then((verdict) => (verdict.ok ? invite.answer(ANSWER) : challenge()));
    };
    return { challenged: () => challenged };
  }

  it('answers a 401 once with the credentials and gets the 200', async () => {
    const callee = challengingCallee();
    const call = a.uac.invite({
      target: callTo(b),
      from: 'sip:alice@example.com',
      sdp: OFFER,
      credentials: { username: 'alice', password: 'correct horse' },
    });
    const first = call.request;
    const outcome = await call.outcome;
    expect(outcome.answered).toBe(true);
    expect(callee.challenged()).toBe(1);
    const retried = call.request!;
    expect(retried.headers.get('Authorization')).toMatch(/^Digest /);
    expect(retried.callId()).toBe(outcome.answered && outcome.dialog.callId);
    expect(retried.cseq().seq).toBe((first?.cseq().seq ?? retried.cseq().seq - 1) + 1);
    if (outcome.answered) await outcome.dialog.bye();
  });

  it('reports a wrong password as an authentication failure, distinct from a rejection', async () => {
    const callee = challengingCallee();
    const outcome = await a.uac.invite({
      target: callTo(b),
      from: 'sip:alice@example.com',
      sdp: OFFER,
      credentials: { username: 'alice', password: 'wrong' },
    }).outcome;
    expect(outcome).toMatchObject({
      answered: false,
      failure: { kind: 'auth-failed', status: 401 },
    });
    expect(callee.challenged()).toBe(2);
  });

  it('answers a 407 with Proxy-Authorization', async () => {
    const callee = challengingCallee(407);
    const call = a.uac.invite({
      target: callTo(b),
      from: 'sip:alice@example.com',
      sdp: OFFER,
      credentials: { username: 'alice', password: 'correct horse' },
    });
    const outcome = await call.outcome;
    expect(outcome.answered).toBe(true);
    expect(callee.challenged()).toBe(1);
    expect(call.request!.headers.get('Proxy-Authorization')).toMatch(/^Digest /);
    if (outcome.answered) await outcome.dialog.bye();
  });

  it('without credentials a 401 is an ordinary rejection', async () => {
    challengingCallee();
    const outcome = await a.uac.invite({
      target: callTo(b),
      from: 'sip:alice@example.com',
      sdp: OFFER,
    }).outcome;
    expect(outcome).toMatchObject({ answered: false, failure: { kind: 'rejected', status: 401 } });
  });
});

describe('the UAC against a scripted peer', () => {
  let peer: RawUdpPeer;

  beforeAll(async () => {
    peer = await RawUdpPeer.open();
  });

  afterAll(() => peer.close());

  // The peer outlives each test, so a retransmission from an earlier test can still arrive:
  // each test looks only at the requests of its own call.
  let callId = '';
  const requests = (method: string) =>
    peer.received.filter(
      (m): m is SipRequest =>
        m instanceof SipRequest && m.method === method && m.callId() === callId,
    );

  /** Waits for the INVITE of the call just placed, and follows its Call-ID from then on. */
  async function nextInvite(): Promise<SipRequest> {
    const isInvite = (m: unknown): m is SipRequest =>
      m instanceof SipRequest && m.method === 'INVITE';
    await until(() => peer.received.some(isInvite));
    const invite = peer.received.find(isInvite)!;
    callId = invite.callId();
    return invite;
  }

  /** A response to `request` as the scripted UAS writes it. */
  function reply(request: SipRequest, status: number, toTag = 'peer1'): string {
    const vias = request.headers
      .getRows('Via')
      .map((v) => `Via: ${v}\n`)
      .join('');
    const to = request.headers.get('To')!;
    return `SIP/2.0 ${status} Whatever
${vias}From: ${request.headers.get('From')}
To: ${to.includes('tag=') ? to : `${to};tag=${toTag}`}
Call-ID: ${request.callId()}
CSeq: ${request.headers.get('CSeq')}
Contact: <sip:peer@127.0.0.1:${peer.port}>
Content-Length: 0

`;
  }

  it('holds the CANCEL until a provisional response, then ACKs and BYEs a 2xx that crosses it; the owner hears at once', async () => {
    peer.received.length = 0;
    const call = a.uac.invite({
      target: `sip:x@127.0.0.1:${peer.port}`,
      from: 'sip:a@test',
      sdp: OFFER,
    });
    const invite = await nextInvite();
    call.cancel();
    // The owner does not wait for the far end (or Timer B): the call is cancelled for it now.
    expect(call.state).toBe('failed');
    expect(await call.outcome).toMatchObject({
      answered: false,
      failure: { kind: 'cancelled', status: 487, response: null },
    });
    await sleep(60);
    // RFC 3261 9.1: no provisional response yet, so no CANCEL.
    expect(requests('CANCEL')).toHaveLength(0);
    peer.send(reply(invite, 180), a.port);
    await until(() => requests('CANCEL').length === 1);
    const cancel = requests('CANCEL')[0]!;
    expect(cancel.topVia().branch).toBe(invite.topVia().branch);
    expect(cancel.cseq()).toMatchObject({ seq: invite.cseq().seq, method: 'CANCEL' });
    peer.send(reply(cancel, 200), a.port);
    // The callee answered before the CANCEL reached it.
    peer.send(reply(invite, 200), a.port);
    await until(() => requests('BYE').length === 1);
    const ack = requests('ACK')[0]!;
    expect(ack.cseq()).toMatchObject({ seq: invite.cseq().seq, method: 'ACK' });
    expect(ack.uri).toBe(`sip:peer@127.0.0.1:${peer.port}`);
    expect(requests('BYE')[0]!.to().tag).toBe('peer1');
    const outcome = await call.outcome;
    expect(outcome).toMatchObject({ answered: false, failure: { kind: 'cancelled', status: 487 } });
  });

  it('lets the owner of an answered call and the responses go when the call ends, while its transactions linger', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    peer.received.length = 0;
    // The owner, as a call leg is: reachable only through the delegates it hangs on the
    // INVITE and on its dialog.
    let answerResponse: WeakRef<object> | null = null;
    const owned = (() => {
      const owner = { answered: 0, ended: 0 };
      const call = a.uac.invite({
        target: `sip:x@127.0.0.1:${peer.port}`,
        from: 'sip:a@test',
        sdp: OFFER,
        delegate: {
          onAnswered: (answer) => {
            owner.answered++;
            answerResponse = new WeakRef(answer.response);
            answer.dialog.delegate = { onTerminated: () => owner.ended++ };
          },
        },
      });
      return { call, owner: new WeakRef(owner) };
    })();
    const invite = await nextInvite();
    peer.send(reply(invite, 180, 'peer3'), a.port);
    peer.send(reply(invite, 200, 'peer3'), a.port);
    const outcome = await owned.call.outcome;
    if (!outcome.answered) throw new Error('expected an answer');
    expect(owned.owner.deref()?.answered).toBe(1);
    const byeResponse = outcome.dialog.bye().then((response) => new WeakRef(response!));
    await until(() => requests('BYE').length === 1);
    peer.send(reply(requests('BYE')[0]!, 200, 'peer3'), a.port);
    const byeAnswer = await byeResponse;
    // Timer M (64*T1) keeps the INVITE transaction, the dialog lingers as long to ACK 2xx
    // retransmissions, and Timer K keeps the BYE's transaction: none may keep the owner, the
    // 2xx to the INVITE or the response to the BYE.
    expect(owned.call.state).toBe('answered');
    const held = () => [owned.owner, answerResponse!, byeAnswer].filter((r) => r.deref());
    for (let i = 0; i < 5 && held().length > 0; i++) {
      await sleep(10);
      gc();
    }
    expect(owned.owner.deref()).toBeUndefined();
    expect(answerResponse!.deref()).toBeUndefined();
    expect(byeAnswer.deref()).toBeUndefined();
  });

  it('ACKs every retransmission of the 2xx, also after the transaction has ended', async () => {
    peer.received.length = 0;
    const call = a.uac.invite({
      target: `sip:x@127.0.0.1:${peer.port}`,
      from: 'sip:a@test',
      sdp: OFFER,
    });
    const invite = await nextInvite();
    const ok = reply(invite, 200, 'peer2');
    peer.send(ok, a.port);
    expect((await call.outcome).answered).toBe(true);
    await until(() => requests('ACK').length === 1);
    peer.send(ok, a.port);
    await until(() => requests('ACK').length === 2);
    // After Timer M (64*T1) the transaction is gone and the dialog layer answers it.
    await sleep(64 * TIMERS.t1 + 100);
    peer.send(ok, a.port);
    await until(() => requests('ACK').length === 3);
    const acks = requests('ACK');
    expect(acks[2]!.topVia().branch).toBe(acks[0]!.topVia().branch);
  });

  it('times out as a 408 when nothing answers', async () => {
    const outcome = await a.uac.invite({
      target: `sip:x@127.0.0.1:${peer.port}`,
      from: 'sip:a@test',
      sdp: OFFER,
      // The scripted peer stays silent for this Call-ID.
    }).outcome;
    expect(outcome).toMatchObject({ answered: false, failure: { kind: 'timeout', status: 408 } });
  });

  it('reports a transport error as a 503', async () => {
    const outcome = await a.uac.invite({
      target: 'sip:x@127.0.0.1:9',
      from: 'sip:a@test',
      sdp: OFFER,
      destination: { protocol: 'TCP', address: { address: '127.0.0.1', port: 9 } },
    }).outcome;
    expect(outcome).toMatchObject({ answered: false, failure: { kind: 'transport', status: 503 } });
  });

  it('sends an INVITE with a pre-loaded route set (a Path) to its first hop, and CANCELs the same way', async () => {
    peer.received.length = 0;
    const routeSet = [
      `<sip:127.0.0.1:${peer.port};lr;received=sip:192.0.2.9:5099>`,
      '<sip:edge.example.net;lr>',
    ];
    const call = a.uac.invite({
      target: 'sip:phone@192.0.2.9:5099',
      from: 'sip:a@test',
      sdp: OFFER,
      routeSet,
    });
    const invite = await nextInvite();
    // RFC 3261 8.1.2 and 12.2.1.1: the first route loose-routes, so the Request-URI stays
    // the target and every route goes in Route, in order.
    expect(invite.uri).toBe('sip:phone@192.0.2.9:5099');
    expect(invite.headers.getAll('Route')).toEqual(routeSet);
    peer.send(reply(invite, 180), a.port);
    await until(() => call.state === 'proceeding');
    call.cancel();
    await until(() => requests('CANCEL').length > 0);
    expect(requests('CANCEL')[0]!.headers.getAll('Route')).toEqual(routeSet);
    peer.send(reply(requests('CANCEL')[0]!, 200), a.port);
    peer.send(reply(invite, 487), a.port);
    expect(await call.outcome).toMatchObject({ answered: false });
  });

  it('refuses bad options before sending anything', () => {
    expect(() => a.uac.invite({ target: 'mailto:x@y', from: 'sip:a@test', sdp: OFFER })).toThrow(
      'Expected a sip: or sips: URI for target but received "mailto:x@y"',
    );
    expect(() =>
      a.uac.invite({
        target: callTo(b),
        from: 'sip:a@test',
        sdp: OFFER,
        headers: [['Call-ID', 'mine']],
      }),
    ).toThrow('Expected headers the UAC does not write but received Call-ID');
    expect(() =>
      a.uac.invite({
        target: callTo(b),
        from: 'sip:a@test',
        sdp: OFFER,
        routeSet: ['<tel:+14155550100>'],
      }),
    ).toThrow('Expected Route values with sip: or sips: URIs for routeSet but received');
  });
});

describe('the UAS against a scripted peer', () => {
  let peer: RawUdpPeer;

  beforeAll(async () => {
    peer = await RawUdpPeer.open();
  });

  afterAll(() => peer.close());

  function invite(callId: string, extra = ''): string {
    return `INVITE sip:bob@127.0.0.1:${b.port} SIP/2.0
Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK${callId};rport
Max-Forwards: 70
From: <sip:raw@127.0.0.1>;tag=raw1
To: <sip:bob@127.0.0.1>
Call-ID: ${callId}
CSeq: 7 INVITE
Contact: <sip:raw@127.0.0.1:${peer.port}>
${extra}Content-Type: application/sdp
Content-Length: ${Buffer.byteLength(OFFER)}

${OFFER}`;
  }

  function ackFor(ok: SipResponse): string {
    return `ACK sip:raw-target@127.0.0.1:${b.port} SIP/2.0
Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bKack${Date.now()};rport
Max-Forwards: 70
From: ${ok.headers.get('From')}
To: ${ok.headers.get('To')}
Call-ID: ${ok.callId()}
CSeq: ${ok.cseq().seq} ACK
Content-Length: 0

`;
  }

  const oks = (callId: string) =>
    peer.received.filter(
      (m): m is SipResponse =>
        m instanceof SipResponse && m.status === 200 && m.callId() === callId,
    );

  it('retransmits the 2xx, T1 doubling, until the ACK, then stops', async () => {
    peer.received.length = 0;
    const confirmed = deferred();
    b.uas.onInvite = (incoming) => {
      incoming.delegate = { onConfirmed: () => confirmed.resolve() };
      incoming.answer(ANSWER);
    };
    const before = b.retransmitted2xx();
    peer.send(invite('rtx1'), b.port);
    await until(() => oks('rtx1').length >= 4);
    peer.send(ackFor(oks('rtx1')[0]!), b.port);
    await confirmed.promise;
    const sent = oks('rtx1').length;
    await sleep(3 * TIMERS.t2);
    expect(oks('rtx1').length).toBeLessThanOrEqual(sent + 1);
    const retransmitted = b.retransmitted2xx() - before;
    expect(retransmitted).toBeGreaterThanOrEqual(3);
    expect(retransmitted).toBe(oks('rtx1').length - 1);
  });

  it('without an ACK in 64*T1 sends a BYE and reports the failure', async () => {
    peer.received.length = 0;
    const failed = deferred<string>();
    b.uas.onInvite = (incoming) => {
      incoming.delegate = { onFailed: (reason) => failed.resolve(reason) };
      incoming.answer(ANSWER);
    };
    peer.send(invite('noack1'), b.port);
    expect(await failed.promise).toBe('no-ack');
    await until(() => peer.received.some((m) => m instanceof SipRequest && m.method === 'BYE'));
    const bye = peer.received.find(
      (m): m is SipRequest => m instanceof SipRequest && m.method === 'BYE',
    )!;
    expect(bye.uri).toBe(`sip:raw@127.0.0.1:${peer.port}`);
    expect(bye.callId()).toBe('noack1');
  });

  it('holds a hangup until the ACK of its 2xx has come (RFC 3261 15)', async () => {
    peer.received.length = 0;
    b.uas.onInvite = (incoming) => {
      incoming.answer(ANSWER);
      void incoming.hangup();
    };
    peer.send(invite('early-hangup'), b.port);
    await until(() => oks('early-hangup').length >= 2);
    const byes = () =>
      peer.received.filter(
        (m) => m instanceof SipRequest && m.method === 'BYE' && m.callId() === 'early-hangup',
      ).length;
    expect(byes()).toBe(0);
    peer.send(ackFor(oks('early-hangup')[0]!), b.port);
    await until(() => byes() === 1);
  });

  it('answers an INVITE with Max-Forwards 0 with 483', async () => {
    peer.received.length = 0;
    b.uas.onInvite = () => {
      throw new Error('not reached');
    };
    peer.send(invite('mf0').replace('Max-Forwards: 70', 'Max-Forwards: 0'), b.port);
    await until(() => peer.received.some((m) => m instanceof SipResponse && m.status === 483));
  });

  it('answers 200 to a CANCEL that comes after its INVITE was answered, which stays answered; 481 to one of no INVITE', async () => {
    peer.received.length = 0;
    let cancelled = 0;
    b.uas.onInvite = (incoming) => {
      incoming.delegate = { onCancelled: () => cancelled++ };
      incoming.reject(486);
    };
    const cancel = (callId: string) =>
      invite(callId)
        .replace(/^INVITE /, 'CANCEL ')
        .replace('CSeq: 7 INVITE', 'CSeq: 7 CANCEL')
        .replace(
          /Content-Type: application\/sdp\nContent-Length: \d+\n\n[\s\S]*$/,
          'Content-Length: 0\n\n',
        );
    const answersTo = (callId: string, method: string) =>
      peer.received.filter(
        (m): m is SipResponse =>
          m instanceof SipResponse && m.callId() === callId && m.cseq().method === method,
      );
    peer.send(invite('late-cancel'), b.port);
    await until(() => answersTo('late-cancel', 'INVITE').some((r) => r.status === 486));
    // RFC 3261 9.2: the CANCEL matched a transaction, so it is answered 200; it has no effect.
    peer.send(cancel('late-cancel'), b.port);
    await until(() => answersTo('late-cancel', 'CANCEL').length === 1);
    expect(answersTo('late-cancel', 'CANCEL')[0]!.status).toBe(200);
    expect(answersTo('late-cancel', 'INVITE').map((r) => r.status)).not.toContain(487);
    expect(cancelled).toBe(0);
    peer.send(cancel('no-such-invite'), b.port);
    await until(() => answersTo('no-such-invite', 'CANCEL').length === 1);
    expect(answersTo('no-such-invite', 'CANCEL')[0]!.status).toBe(481);
  });
});
