import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/clock.js';
import { DigestAuthenticator } from '../../../src/sip/auth/digest-authenticator.js';
import { digestHash } from '../../../src/sip/auth/digest.js';
import type { Dialog } from '../../../src/sip/dialog/dialog.js';
import type { DialogEnd, SessionOffer } from '../../../src/sip/dialog/dialog-delegate.js';
import { SipRequest, SipResponse } from '../../../src/sip/message/index.js';
import { responseTo } from '../../../src/sip/transaction/response-to.js';
import { RawUdpPeer } from '../../support/sip-client.js';
import { TEST_TIMERS, openSipPeer, type SipPeer } from '../../support/sip-peer.js';
import { sleep, until } from '../../support/wait.js';

const TIMERS = TEST_TIMERS;

const sdp = (version: number, port: number) =>
  `v=0\r\no=x 1 ${version} IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\n`;

interface Peer extends SipPeer {
  /** Requests received, as "PROTOCOL METHOD". */
  trace: string[];
}

async function openPeer(): Promise<Peer> {
  const peer = await openSipPeer({ timers: TIMERS });
  const trace: string[] = [];
  peer.stack.transport.trace = (direction, data, from) => {
    const line = data.toString('latin1', 0, data.indexOf('\r\n'));
    if (direction === 'in' && !line.startsWith('SIP/2.0')) {
      trace.push(`${from.split(' ')[0]} ${line.split(' ')[0]}`);
    }
  };
  return { ...peer, trace };
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
  a.dialogs.close();
  b.dialogs.close();
});

/** A calls B; resolves with both ends of the confirmed dialog. */
async function call(): Promise<{ caller: Dialog; callee: Dialog }> {
  let callee: Dialog | null = null;
  let acked = false;
  b.uas.onInvite = (invite) => {
    invite.delegate = { onConfirmed: () => (acked = true) };
    callee = invite.answer(sdp(1, 5000));
  };
  const outcome = await a.uac.invite({
    target: `sip:bob@127.0.0.1:${b.port}`,
    from: 'sip:alice@example.com',
    sdp: sdp(1, 4000),
  }).outcome;
  if (!outcome.answered) throw new Error(`call failed: ${outcome.failure.status}`);
  await until(() => acked);
  return { caller: outcome.dialog, callee: callee! };
}

describe('requests within a dialog between two stacks', () => {
  it('a re-INVITE from the callee changes the SDP and the target, and the next BYE follows it', async () => {
    const { caller, callee } = await call();
    const offers: SessionOffer[] = [];
    caller.delegate = {
      onOffer: (offer) => {
        offers.push(offer);
        return { sdp: sdp(2, 4002) };
      },
    };
    const calleeEnded = new Promise<DialogEnd>((resolve) => {
      callee.delegate = { onTerminated: resolve };
    });
    const seqBefore = callee.localSeq;
    const newTarget = `sip:bob@127.0.0.1:${b.tcpPort};transport=tcp`;
    const response = await callee.reinvite(sdp(2, 5002), { contact: newTarget });
    expect(response.status).toBe(200);
    expect(offers).toHaveLength(1);
    expect(offers[0]).toMatchObject({ method: 'INVITE', sdp: sdp(2, 5002) });
    expect(callee.localSdp).toBe(sdp(2, 5002));
    expect(callee.remoteSdp).toBe(sdp(2, 4002));
    expect(caller.remoteSdp).toBe(sdp(2, 5002));
    expect(caller.localSdp).toBe(sdp(2, 4002));
    expect(caller.remoteTarget).toBe(newTarget);
    expect(callee.localTarget).toBe(newTarget);
    expect(seqBefore).toBeNull(); // the callee had sent nothing: its CSeq starts here
    expect(callee.localSeq).not.toBeNull();
    // The re-INVITE's 2xx was acknowledged: the caller stops retransmitting it.
    await until(() => !a.dialogs.awaitingAck(caller));
    expect(a.trace.filter((t) => t.endsWith('ACK'))).not.toHaveLength(0);

    b.trace.length = 0;
    expect((await caller.bye())?.status).toBe(200);
    expect(await calleeEnded).toEqual({ kind: 'bye', by: 'remote' });
    expect(b.trace).toContain('TCP BYE');
  });

  it('a re-INVITE from the caller, answered through onOffer, gets its ACK', async () => {
    const { caller, callee } = await call();
    const acks: SipRequest[] = [];
    callee.delegate = {
      onOffer: async (offer) => {
        await sleep(10);
        return offer.sdp?.includes('4010') ? { sdp: sdp(3, 5010) } : { status: 488 };
      },
      onAck: (ack) => acks.push(ack),
    };
    const response = await caller.reinvite(sdp(3, 4010));
    expect(response.status).toBe(200);
    expect(caller.remoteSdp).toBe(sdp(3, 5010));
    await until(() => acks.length === 1);
    expect(acks[0]!.cseq().seq).toBe(response.cseq().seq);

    const refused = await caller.reinvite(sdp(4, 4999));
    expect(refused.status).toBe(488);
    expect(caller.state).toBe('confirmed');
    expect(caller.remoteSdp).toBe(sdp(3, 5010));
  });

  it('a refusal whose reason holds control characters (from a bad SDP line) is sent cleaned', async () => {
    const { caller, callee } = await call();
    callee.delegate = {
      onOffer: () => ({ status: 400, reason: 'SDP line 7: "a=x\ry" is not valid' }),
    };
    const refused = await caller.reinvite(sdp(3, 4010));
    expect(refused.status).toBe(400);
    expect(refused.reason).toBe('SDP line 7: "a=x y" is not valid');
    // The dialog carries on.
    callee.delegate = {};
    expect((await caller.reinvite(sdp(4, 4011))).status).toBe(200);
  });

  it('without an onOffer, a re-INVITE is answered with the current SDP', async () => {
    const { caller, callee } = await call();
    const response = await caller.reinvite(sdp(5, 4020));
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe(sdp(1, 5000));
    expect(callee.remoteSdp).toBe(sdp(5, 4020));
  });

  it('an UPDATE offer is answered by the owner; one without SDP just gets 200', async () => {
    const { caller, callee } = await call();
    callee.delegate = {
      onOffer: (offer) => ({ sdp: offer.method === 'UPDATE' ? sdp(6, 5030) : '' }),
    };
    const response = await caller.update(sdp(6, 4030));
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe(sdp(6, 5030));
    expect(caller.remoteSdp).toBe(sdp(6, 5030));
    expect((await caller.request('UPDATE')).status).toBe(200);
  });

  it('an INFO with application/dtmf-relay reaches the owner, who answers it', async () => {
    const { caller, callee } = await call();
    const infos: SipRequest[] = [];
    callee.delegate = {
      onInfo: (request, transaction) => {
        infos.push(request);
        transaction.respond(responseTo(request, 200));
      },
    };
    const response = await caller.info('Signal=5\r\nDuration=160\r\n', 'application/dtmf-relay');
    expect(response.status).toBe(200);
    expect(infos).toHaveLength(1);
    expect(infos[0]!.headers.get('Content-Type')).toBe('application/dtmf-relay');
    expect(infos[0]!.body.toString()).toBe('Signal=5\r\nDuration=160\r\n');
    // Sent the other way, with no owner callback: the default 200.
    expect(
      (await callee.info('Signal=#\r\nDuration=100\r\n', 'application/dtmf-relay')).status,
    ).toBe(200);
  });

  it('a request challenged with 407 goes again with Proxy-Authorization and a new CSeq, once', async () => {
    const { caller, callee } = await call();
    const authenticator = new DigestAuthenticator({
      realm: 'peer.test',
      secret: Buffer.alloc(32, 7),
      clock: systemClock,
    });
    const secret = (password: string) => ({
      ha1: (algorithm: 'MD5' | 'SHA-256') =>
        digestHash(algorithm, `alice:${authenticator.realm}:${password}`),
    });
    const seen: { cseq: number; credentials: boolean }[] = [];
    callee.delegate = {
      onInfo: (request, transaction) => {
        const [credentials] = request.proxyAuthorization();
        seen.push({ cseq: request.cseq().seq, credentials: credentials !== undefined });
        const challenge = () =>
          responseTo(request, 407, {
            headers: authenticator.challenges().map((v) => ['Proxy-Authenticate', v] as const),
          });
        if (!credentials) return transaction.respond(challenge());
        void authenticator
          .verify(credentials.params, request, async (user) =>
            user === 'alice' ? secret('Right-Pass1') : null,
          )
          .then((verdict) =>
            transaction.respond(verdict.ok ? responseTo(request, 200) : challenge()),
          );
      },
    };
    const info = () => caller.info('Signal=5\r\nDuration=160\r\n', 'application/dtmf-relay');

    // Without credentials the 407 is the answer.
    expect((await info()).status).toBe(407);
    caller.credentials = { username: 'alice', password: 'Right-Pass1' };
    seen.length = 0;
    expect((await info()).status).toBe(200);
    expect(seen.map((s) => s.credentials)).toEqual([false, true]);
    expect(seen[1]!.cseq).toBe(seen[0]!.cseq + 1);

    // Refused credentials are not tried again: two requests, and the second 407 is the answer.
    caller.credentials = { username: 'alice', password: 'Wrong-Pass1' };
    seen.length = 0;
    expect((await info()).status).toBe(407);
    expect(seen.map((s) => s.credentials)).toEqual([false, true]);
  });

  it('OPTIONS in the dialog gets 200 with Allow; an unknown method gets 501', async () => {
    const { caller } = await call();
    const options = await caller.request('OPTIONS');
    expect(options.status).toBe(200);
    expect(options.headers.get('Allow')).toContain('INVITE');
    expect((await caller.request('NOTIFY', { headers: [['Event', 'x']] })).status).toBe(501);
  });

  it('re-INVITEs crossing on the wire both get 491 (glare), and the dialog carries on', async () => {
    const { caller, callee } = await call();
    const [one, two] = await Promise.all([
      caller.reinvite(sdp(7, 4040)),
      callee.reinvite(sdp(7, 5040)),
    ]);
    expect([one.status, two.status]).toEqual([491, 491]);
    expect(caller.state).toBe('confirmed');
    expect((await caller.reinvite(sdp(8, 4050))).status).toBe(200);
    // Locally, a second re-INVITE while one is under way is refused outright (RFC 3261 14.1).
    callee.delegate = { onOffer: () => sleep(50).then(() => ({ sdp: sdp(9, 5060) })) };
    const pending = caller.reinvite(sdp(9, 4060));
    await expect(caller.reinvite(sdp(10, 4070))).rejects.toThrow(/offer\/answer exchange/);
    expect((await pending).status).toBe(200);
  });

  it('a request to a dialog the peer no longer has gets 481 and ends ours', async () => {
    const { caller, callee } = await call();
    const ended = new Promise<DialogEnd>(
      (resolve) => (caller.delegate = { onTerminated: resolve }),
    );
    b.dialogs.close(); // the callee forgets the dialog without a BYE
    expect(callee.state).toBe('terminated');
    expect((await caller.info('x', 'text/plain')).status).toBe(481);
    expect(await ended).toEqual({ kind: 'request-failed', method: 'INFO', status: 481 });
  });
});

describe('CSeq order in a dialog (RFC 3261 12.2.2)', () => {
  let peer: RawUdpPeer;

  beforeAll(async () => {
    peer = await RawUdpPeer.open();
  });

  afterAll(() => peer.close());

  function request(method: string, seq: number, toTag: string, body = ''): string {
    return `${method} sip:bob@127.0.0.1:${b.port} SIP/2.0
Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK${method}${seq}${Date.now()};rport
Max-Forwards: 70
From: <sip:raw@127.0.0.1>;tag=raw9
To: <sip:bob@127.0.0.1>${toTag ? `;tag=${toTag}` : ''}
Call-ID: cseq-order
CSeq: ${seq} ${method}
Contact: <sip:raw@127.0.0.1:${peer.port}>
${body ? 'Content-Type: application/sdp\n' : ''}Content-Length: ${Buffer.byteLength(body)}

${body}`;
  }

  async function responseFor(method: string, seq: number): Promise<SipResponse> {
    const match = (m: SipRequest | SipResponse): m is SipResponse =>
      m instanceof SipResponse &&
      m.status >= 200 &&
      m.cseq().seq === seq &&
      m.cseq().method === method;
    await until(() => peer.received.some(match));
    return peer.received.find(match)!;
  }

  it('a request with a lower CSeq than the last one gets 500', async () => {
    b.uas.onInvite = (invite) => invite.answer(sdp(1, 5000));
    peer.send(request('INVITE', 10, '', sdp(1, 4000)), b.port);
    const ok = await responseFor('INVITE', 10);
    const toTag = ok.to().tag!;
    peer.send(
      `ACK sip:bob@127.0.0.1:${b.port} SIP/2.0
Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bKack10;rport
Max-Forwards: 70
From: <sip:raw@127.0.0.1>;tag=raw9
To: <sip:bob@127.0.0.1>;tag=${toTag}
Call-ID: cseq-order
CSeq: 10 ACK
Content-Length: 0

`,
      b.port,
    );
    peer.send(request('INFO', 12, toTag), b.port);
    expect((await responseFor('INFO', 12)).status).toBe(200);
    peer.send(request('INFO', 11, toTag), b.port);
    expect((await responseFor('INFO', 11)).status).toBe(500);
    peer.send(request('INFO', 13, 'not-ours'), b.port);
    expect((await responseFor('INFO', 13)).status).toBe(481);
  });
});
