import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialogSnapshot } from '../../../src/sip/dialog/dialog-snapshot.js';
import { sendSnapshotBye } from '../../../src/sip/dialog/snapshot-bye.js';
import { openSipPeer, type SipPeer } from '../../support/sip-peer.js';

/**
 * A BYE sent from a snapshot by a stack that does not keep the dialog: what it resolves with
 * when the peer answers, stays silent, or cannot be reached from here.
 */
let sender: SipPeer;
let peer: SipPeer;
let silent: Socket;
let silentPort: number;
const heard: string[] = [];

beforeAll(async () => {
  [sender, peer] = await Promise.all([openSipPeer(), openSipPeer()]);
  silent = createSocket('udp4');
  silent.on('message', (data) => heard.push(data.toString('latin1')));
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  silentPort = silent.address().port;
});

afterAll(async () => {
  await Promise.all([sender.stack.close(), peer.stack.close()]);
  silent.close();
});

const snapshot = (port: number, pinned: DialogSnapshot['pinned'] = null): DialogSnapshot => ({
  callId: 'orphan-1@127.0.0.1',
  localTag: 'gw',
  remoteTag: 'peer',
  localAddress: '<sip:gw@127.0.0.1>;tag=gw',
  remoteAddress: '<sip:peer@127.0.0.1>;tag=peer',
  remoteTarget: `sip:peer@127.0.0.1:${port}`,
  routeSet: [],
  localSeq: 7,
  pinned,
});

describe('a BYE from a dialog snapshot', () => {
  it('resolves with the peer answer: a UA that does not know the dialog says 481', async () => {
    const outcome = await sendSnapshotBye(sender.dialogs, snapshot(peer.port));
    expect(outcome.answered).toBe(true);
    expect(outcome.answered && outcome.response.status).toBe(481);
  });

  it('resolves unanswered after 64*T1 (its retransmissions sent) when the peer is silent', async () => {
    const outcome = await sendSnapshotBye(sender.dialogs, snapshot(silentPort));
    expect(outcome).toEqual({ answered: false, reason: 'no final response within 64*T1' });
    const byes = heard.filter((m) => m.startsWith(`BYE sip:peer@127.0.0.1:${silentPort} SIP/2.0`));
    // Timer E doubles from T1 up to T2 within 64*T1: one send and several retransmissions,
    // all of them the same request (one branch, CSeq 107).
    expect(byes.length).toBeGreaterThan(1);
    expect(new Set(byes).size).toBe(1);
    expect(byes[0]).toMatch(/\r\nCSeq: 107 BYE\r\n/);
    expect(byes[0]).toMatch(new RegExp(`^Via: SIP/2\\.0/UDP 127\\.0\\.0\\.1:${sender.port};`, 'm'));
  });

  it('is not sent to a WebSocket peer, whose connection only its node held', async () => {
    const before = heard.length;
    const pinned = { protocol: 'WS' as const, address: '127.0.0.1', port: silentPort };
    const outcome = await sendSnapshotBye(sender.dialogs, snapshot(silentPort, pinned));
    expect(outcome).toEqual({
      answered: false,
      reason: 'unreachable: a WebSocket peer is reached only over the connection its node held',
    });
    expect(heard.length).toBe(before);
  });
});
