import { describe, expect, it } from 'vitest';
import { systemScheduler } from '../../../../src/core/scheduler.js';
import { Dialog } from '../../../../src/sip/dialog/dialog.js';
import { DialogLayer } from '../../../../src/sip/dialog/dialog-layer.js';
import {
  byeFromSnapshot,
  readDialogSnapshot,
  snapshotOf,
  SNAPSHOT_CSEQ_MARGIN,
  type DialogSnapshot,
} from '../../../../src/sip/dialog/dialog-snapshot.js';
import { snapshotDestination } from '../../../../src/sip/dialog/snapshot-bye.js';
import { parseMessage, SipRequest, SipResponse } from '../../../../src/sip/message/index.js';
import { SipStack } from '../../../../src/sip/sip-stack.js';
import type { Flow } from '../../../../src/sip/transport/flow.js';

function message(text: string): SipRequest | SipResponse {
  return parseMessage(Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'latin1'));
}

const INVITE = message(`INVITE sip:bob@biloxi.example.com SIP/2.0
Via: SIP/2.0/UDP client.atlanta.example.com:5060;branch=z9hG4bK74bf9
Max-Forwards: 70
From: "Alice" <sip:alice@atlanta.example.com>;tag=9fxced76sl
To: Bob <sip:bob@biloxi.example.com>
Call-ID: 3848276298220188511@atlanta.example.com
CSeq: 31 INVITE
Contact: <sip:alice@192.0.2.20:5062;transport=tcp>
Record-Route: <sip:192.0.2.31:5070;lr>
Record-Route: <sip:192.0.2.30;lr>
Content-Length: 0

`) as SipRequest;

const answer = (contact: string, toTag: string) =>
  message(`SIP/2.0 200 OK
Via: SIP/2.0/UDP client.atlanta.example.com:5060;branch=z9hG4bK74bf9
From: "Alice" <sip:alice@atlanta.example.com>;tag=9fxced76sl
To: Bob <sip:bob@biloxi.example.com>;tag=${toTag}
Call-ID: 3848276298220188511@atlanta.example.com
CSeq: 31 INVITE
Contact: ${contact}
Record-Route: <sip:192.0.2.31:5070;lr>, <sip:192.0.2.30;lr>
Content-Length: 0

`) as SipResponse;

const FLOW: Flow = {
  protocol: 'TCP',
  local: { address: '192.0.2.9', port: 5060 },
  remote: { address: '198.51.100.7', port: 40123 },
  connectionId: 'tcp-7',
};

/** The snapshot as another node reads it: through JSON. */
const throughJson = (snapshot: DialogSnapshot) =>
  readDialogSnapshot(JSON.parse(JSON.stringify(snapshot)));

describe('a dialog snapshot', () => {
  it('gives the BYE the dialog would send, From/To/Call-ID/Route as it has them, CSeq past its own', () => {
    const dialog = Dialog.forUac(INVITE, answer('<sip:bob@192.0.2.4:5080>', '314159'), {
      protocol: 'UDP',
      address: { address: '192.0.2.30', port: 5060 },
    });
    dialog.credentials = { username: 'trunk-user', password: 'trunk-secret-7' };
    dialog.createRequest('INFO');
    const snapshot = snapshotOf(dialog);
    expect(JSON.stringify(snapshot)).not.toMatch(/trunk-(user|secret)/);
    const read = throughJson(snapshot);
    expect(read).toEqual({
      callId: '3848276298220188511@atlanta.example.com',
      localTag: '9fxced76sl',
      remoteTag: '314159',
      localAddress: '"Alice" <sip:alice@atlanta.example.com>;tag=9fxced76sl',
      remoteAddress: 'Bob <sip:bob@biloxi.example.com>;tag=314159',
      remoteTarget: 'sip:bob@192.0.2.4:5080',
      routeSet: ['<sip:192.0.2.30;lr>', '<sip:192.0.2.31:5070;lr>'],
      localSeq: 32,
      pinned: null,
    });

    const fromSnapshot = byeFromSnapshot(read!);
    const own = dialog.createRequest('BYE');
    expect(fromSnapshot.uri).toBe(own.uri);
    for (const name of ['From', 'To', 'Call-ID', 'Max-Forwards']) {
      expect(fromSnapshot.headers.get(name)).toBe(own.headers.get(name));
    }
    expect(fromSnapshot.headers.getAll('Route')).toEqual(own.headers.getAll('Route'));
    expect(fromSnapshot.headers.has('Via')).toBe(false);
    expect(fromSnapshot.cseq()).toEqual({ seq: 32 + SNAPSHOT_CSEQ_MARGIN, method: 'BYE' });
    expect(own.cseq().seq).toBeLessThan(fromSnapshot.cseq().seq);
  });

  it('of a UAS dialog has our To as From, the caller From as To, and a first CSeq of the margin', () => {
    const ours = answer('<sip:192.0.2.9:5060;transport=tcp>', 'ourtag');
    const read = throughJson(snapshotOf(Dialog.forUas(INVITE, ours, FLOW)))!;
    expect(read.pinned).toEqual({ protocol: 'TCP', address: '198.51.100.7', port: 40123 });
    const bye = byeFromSnapshot(read);
    expect(bye.from().tag).toBe('ourtag');
    expect(bye.to().tag).toBe('9fxced76sl');
    expect(bye.uri).toBe('sip:alice@192.0.2.20:5062;transport=tcp');
    expect(bye.headers.getAll('Route')).toEqual([
      '<sip:192.0.2.31:5070;lr>',
      '<sip:192.0.2.30;lr>',
    ]);
    expect(bye.cseq().seq).toBe(SNAPSHOT_CSEQ_MARGIN);
  });

  it('is refused when it is not one', () => {
    const good = snapshotOf(
      Dialog.forUac(INVITE, answer('<sip:bob@192.0.2.4>', 't'), {
        protocol: 'UDP',
        address: { address: '192.0.2.30', port: 5060 },
      }),
    );
    expect(readDialogSnapshot(good)).toEqual(good);
    for (const bad of [
      null,
      'dialog',
      {},
      { ...good, callId: '' },
      { ...good, routeSet: 'sip:x' },
      { ...good, localSeq: 'one' },
      { ...good, pinned: { protocol: 'SCTP', address: '192.0.2.1', port: 5060 } },
    ]) {
      expect(readDialogSnapshot(bad)).toBeNull();
    }
  });
});

describe('where a BYE from a snapshot goes', () => {
  const layer = new DialogLayer(
    new SipStack({ scheduler: systemScheduler, publicHost: '127.0.0.1' }),
  );
  const base: DialogSnapshot = {
    callId: 'c@h',
    localTag: 'a',
    remoteTag: 'b',
    localAddress: '<sip:gw@192.0.2.9>;tag=a',
    remoteAddress: '<sip:peer@192.0.2.4>;tag=b',
    remoteTarget: 'sip:peer@192.0.2.4:5090;transport=tcp',
    routeSet: [],
    localSeq: 1,
    pinned: null,
  };

  it('is the UDP flow the dialog was pinned to (a NAT binding)', async () => {
    const pinned = { protocol: 'UDP' as const, address: '198.51.100.7', port: 40123 };
    expect(await snapshotDestination(layer, { ...base, pinned })).toEqual({
      protocol: 'UDP',
      address: { address: '198.51.100.7', port: 40123 },
    });
  });

  it('is the next hop found anew when the connection went with its node', async () => {
    const pinned = { protocol: 'TCP' as const, address: '198.51.100.7', port: 40123 };
    expect(await snapshotDestination(layer, { ...base, pinned })).toEqual({
      protocol: 'TCP',
      address: { address: '192.0.2.4', port: 5090 },
    });
    const routed = { ...base, routeSet: ['<sip:192.0.2.30:5070;lr>'] };
    expect(await snapshotDestination(layer, routed)).toEqual({
      protocol: 'UDP',
      address: { address: '192.0.2.30', port: 5070 },
    });
  });

  it('cannot be a WebSocket peer', async () => {
    const pinned = { protocol: 'WSS' as const, address: '198.51.100.7', port: 40123 };
    await expect(
      snapshotDestination(layer, {
        ...base,
        remoteTarget: 'sip:x@df7jal23ls0d.invalid;transport=ws',
        pinned,
      }),
    ).rejects.toThrow(/WebSocket peer is reached only over the connection its node held/);
  });
});
