import { describe, expect, it } from 'vitest';
import { Dialog } from '../../../../src/sip/dialog/dialog.js';
import type { DialogLayer } from '../../../../src/sip/dialog/dialog-layer.js';
import { serveInDialog } from '../../../../src/sip/dialog/in-dialog-server.js';
import type { ServerTransaction } from '../../../../src/sip/transaction/transaction-layer.js';
import { parseMessage, SipRequest, SipResponse } from '../../../../src/sip/message/index.js';
import type { Flow } from '../../../../src/sip/transport/flow.js';
import type { Destination } from '../../../../src/sip/transport/transport-layer.js';

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
Contact: <sip:alice@client.atlanta.example.com;transport=udp>
Record-Route: <sip:p2.example.com;lr>
Record-Route: <sip:p1.example.com;lr>
Content-Length: 0

`) as SipRequest;

/** The 180 or 200 as it comes back through the two proxies that record-routed. */
function answer(status: number, contact = '<sip:bob@client.biloxi.example.com>'): SipResponse {
  return message(`SIP/2.0 ${status} Whatever
Via: SIP/2.0/UDP client.atlanta.example.com:5060;branch=z9hG4bK74bf9
From: "Alice" <sip:alice@atlanta.example.com>;tag=9fxced76sl
To: Bob <sip:bob@biloxi.example.com>;tag=314159
Call-ID: 3848276298220188511@atlanta.example.com
CSeq: 31 INVITE
Contact: ${contact}
Record-Route: <sip:p2.example.com;lr>, <sip:p1.example.com;lr>
Content-Length: 0

`) as SipResponse;
}

const UDP: Destination = { protocol: 'UDP', address: { address: '192.0.2.1', port: 5060 } };

const FLOW: Flow = {
  protocol: 'TCP',
  local: { address: '192.0.2.9', port: 5060 },
  remote: { address: '198.51.100.7', port: 40123 },
  connectionId: 'tcp-7',
};

describe('a UAC dialog (RFC 3261 12.1.2)', () => {
  it('is early from a 1xx with a To tag and confirmed by the 2xx', () => {
    const dialog = Dialog.forUac(INVITE, answer(180), UDP);
    expect(dialog.state).toBe('early');
    expect(dialog.id).toBe('3848276298220188511@atlanta.example.com|9fxced76sl|314159');
    dialog.confirm(answer(200, '<sip:bob@192.0.2.4>'));
    expect(dialog.state).toBe('confirmed');
    expect(dialog.remoteTarget).toBe('sip:bob@192.0.2.4');
    expect(() => dialog.confirm()).not.toThrow();
  });

  it('takes the route set reversed, the target from Contact, and the INVITE CSeq as local', () => {
    const dialog = Dialog.forUac(INVITE, answer(200), UDP);
    expect(dialog.role).toBe('uac');
    expect(dialog.routeSet).toEqual(['<sip:p1.example.com;lr>', '<sip:p2.example.com;lr>']);
    expect(dialog.remoteTarget).toBe('sip:bob@client.biloxi.example.com');
    expect(dialog.localSeq).toBe(31);
    expect(dialog.remoteSeq).toBeNull();
    expect(dialog.localAddress).toBe('"Alice" <sip:alice@atlanta.example.com>;tag=9fxced76sl');
    expect(dialog.remoteAddress).toBe('Bob <sip:bob@biloxi.example.com>;tag=314159');
    expect(dialog.localTarget).toBe('sip:alice@client.atlanta.example.com;transport=udp');
    expect(dialog.secure).toBe(false);
    expect(dialog.pinned).toBeNull();
  });

  it('keeps a connection-oriented destination for every request', () => {
    const tcp: Destination = { protocol: 'TCP', address: { address: '192.0.2.1', port: 5060 } };
    expect(Dialog.forUac(INVITE, answer(200), tcp).pinned).toBe(tcp);
  });

  it('is secure only for a sips Request-URI sent over TLS', () => {
    const sips = message(
      INVITE.toString().replace('INVITE sip:bob', 'INVITE sips:bob'),
    ) as SipRequest;
    const tls: Destination = { protocol: 'TLS', address: { address: '192.0.2.1', port: 5061 } };
    expect(Dialog.forUac(sips, answer(200), tls).secure).toBe(true);
    expect(Dialog.forUac(INVITE, answer(200), tls).secure).toBe(false);
  });

  it('builds loose-routed requests: the target in the Request-URI, the route set in Route', () => {
    const dialog = Dialog.forUac(INVITE, answer(200), UDP);
    const bye = dialog.createRequest('BYE');
    expect(bye.uri).toBe('sip:bob@client.biloxi.example.com');
    expect(bye.headers.getRows('Route')).toEqual([
      '<sip:p1.example.com;lr>',
      '<sip:p2.example.com;lr>',
    ]);
    expect(bye.headers.get('From')).toBe(dialog.localAddress);
    expect(bye.headers.get('To')).toBe(dialog.remoteAddress);
    expect(bye.callId()).toBe(dialog.callId);
    expect(bye.cseq()).toEqual({ seq: 32, method: 'BYE' });
    expect(bye.headers.has('Contact')).toBe(false);
  });

  it('increments the CSeq on every request but the ACK, which takes its INVITE’s', () => {
    const dialog = Dialog.forUac(INVITE, answer(200), UDP);
    const ack = dialog.createAck(INVITE);
    expect(ack.cseq()).toEqual({ seq: 31, method: 'ACK' });
    const reinvite = dialog.createRequest('INVITE', { body: 'v=0\r\n' });
    expect(reinvite.cseq()).toEqual({ seq: 32, method: 'INVITE' });
    expect(reinvite.headers.get('Contact')).toBe(`<${dialog.localTarget}>`);
    expect(reinvite.headers.get('Content-Type')).toBe('application/sdp');
    expect(dialog.createRequest('INFO').cseq().seq).toBe(33);
    expect(dialog.createAck(reinvite).cseq()).toEqual({ seq: 32, method: 'ACK' });
    expect(dialog.localSeq).toBe(33);
    expect(() => dialog.createRequest('ACK')).toThrow(/createAck/);
    expect(() => dialog.createRequest('CANCEL')).toThrow();
  });

  it('copies the INVITE’s credentials into the ACK (RFC 3261 13.2.2.4)', () => {
    const withAuth = message(
      INVITE.toString().replace(
        'Content-Length',
        'Authorization: Digest username="a"\r\nContent-Length',
      ),
    ) as SipRequest;
    const dialog = Dialog.forUac(withAuth, answer(200), UDP);
    expect(dialog.createAck(withAuth).headers.get('Authorization')).toBe('Digest username="a"');
  });

  it('refuses a body without a type, and headers it writes itself', () => {
    const dialog = Dialog.forUac(INVITE, answer(200), UDP);
    expect(() => dialog.createRequest('INFO', { body: 'Signal=1' })).toThrow(/contentType/);
    expect(() => dialog.createRequest('INFO', { headers: [['CSeq', '1 INFO']] })).toThrow(/CSeq/);
    const info = dialog.createRequest('INFO', {
      body: 'Signal=1\r\n',
      contentType: 'application/dtmf-relay',
      headers: [['X-Digit', '1']],
    });
    expect(info.headers.get('Content-Type')).toBe('application/dtmf-relay');
    expect(info.headers.get('X-Digit')).toBe('1');
  });

  it('refreshes the target from the 2xx to a re-INVITE or UPDATE, not from other responses', () => {
    const dialog = Dialog.forUac(INVITE, answer(200), UDP);
    const ok = (method: string, contact: string) =>
      message(
        answer(200, contact).toString().replace('CSeq: 31 INVITE', `CSeq: 40 ${method}`),
      ) as SipResponse;
    dialog.refreshTarget(ok('INFO', '<sip:elsewhere@192.0.2.50>'));
    expect(dialog.remoteTarget).toBe('sip:bob@client.biloxi.example.com');
    dialog.refreshTarget(ok('UPDATE', '<sip:bob@192.0.2.60:5080>'));
    expect(dialog.remoteTarget).toBe('sip:bob@192.0.2.60:5080');
    dialog.refreshTarget(ok('INVITE', '<sip:bob@192.0.2.61;transport=tcp>'));
    expect(dialog.remoteTarget).toBe('sip:bob@192.0.2.61;transport=tcp');
    // A new local target rides on our next target refresh request.
    const reinvite = dialog.createRequest('INVITE', { contact: 'sip:alice@192.0.2.99:5070' });
    expect(reinvite.headers.get('Contact')).toBe('<sip:alice@192.0.2.99:5070>');
    expect(dialog.localTarget).toBe('sip:alice@192.0.2.99:5070');
  });
});

describe('strict routing (RFC 3261 12.2.1.1)', () => {
  it('puts the first route in the Request-URI and the remote target last in Route', () => {
    const strict = message(
      answer(200)
        .toString()
        .replace(
          'Record-Route: <sip:p2.example.com;lr>, <sip:p1.example.com;lr>',
          'Record-Route: <sip:p2.example.com;lr>, <sip:p1.example.com;method=INVITE;maddr=192.0.2.3?Subject=x>',
        ),
    ) as SipResponse;
    const dialog = Dialog.forUac(INVITE, strict, UDP);
    const bye = dialog.createRequest('BYE');
    // Parameters not allowed in a Request-URI (method, headers) are stripped; others stay.
    expect(bye.uri).toBe('sip:p1.example.com;maddr=192.0.2.3');
    expect(bye.headers.getRows('Route')).toEqual([
      '<sip:p2.example.com;lr>',
      '<sip:bob@client.biloxi.example.com>',
    ]);
  });
});

describe('a UAS dialog (RFC 3261 12.1.1)', () => {
  const ours = (status: number) =>
    message(
      `SIP/2.0 ${status} OK
Via: SIP/2.0/UDP client.atlanta.example.com:5060;branch=z9hG4bK74bf9
From: "Alice" <sip:alice@atlanta.example.com>;tag=9fxced76sl
To: Bob <sip:bob@biloxi.example.com>;tag=ourtag
Call-ID: 3848276298220188511@atlanta.example.com
CSeq: 31 INVITE
Contact: <sip:192.0.2.9:5060;transport=tcp>
Content-Length: 0

`,
    ) as SipResponse;

  it('takes the route set in order, the remote CSeq, and keeps the inbound flow', () => {
    const dialog = Dialog.forUas(INVITE, ours(200), FLOW);
    expect(dialog.role).toBe('uas');
    expect(dialog.state).toBe('confirmed');
    expect(dialog.id).toBe('3848276298220188511@atlanta.example.com|ourtag|9fxced76sl');
    expect(dialog.routeSet).toEqual(['<sip:p2.example.com;lr>', '<sip:p1.example.com;lr>']);
    expect(dialog.remoteTarget).toBe('sip:alice@client.atlanta.example.com;transport=udp');
    expect(dialog.localTarget).toBe('sip:192.0.2.9:5060;transport=tcp');
    expect(dialog.remoteSeq).toBe(31);
    expect(dialog.localSeq).toBeNull();
    expect(dialog.pinned).toEqual({
      protocol: 'TCP',
      address: FLOW.remote,
      connectionId: 'tcp-7',
    });
    const bye = dialog.createRequest('BYE');
    expect(bye.headers.get('From')).toBe('Bob <sip:bob@biloxi.example.com>;tag=ourtag');
    expect(bye.headers.get('To')).toBe('"Alice" <sip:alice@atlanta.example.com>;tag=9fxced76sl');
    expect(bye.headers.getRows('Route')).toEqual(dialog.routeSet);
    // An empty local sequence number gets an initial value below 2**31, then counts up.
    const first = bye.cseq().seq;
    expect(first).toBeGreaterThan(0);
    expect(dialog.createRequest('INFO').cseq().seq).toBe(first + 1);
  });

  it('is early after a 1xx and confirmed by our 2xx', () => {
    const dialog = Dialog.forUas(INVITE, ours(180), FLOW);
    expect(dialog.state).toBe('early');
    dialog.confirm();
    expect(dialog.state).toBe('confirmed');
    expect(dialog.routeSet).toEqual(['<sip:p2.example.com;lr>', '<sip:p1.example.com;lr>']);
  });

  it('rejects requests with a lower CSeq than the last, and not ACK or CANCEL', () => {
    const dialog = Dialog.forUas(INVITE, ours(200), FLOW);
    const inDialog = (method: string, seq: number) =>
      message(
        `${method} sip:bob@192.0.2.9 SIP/2.0
Via: SIP/2.0/UDP client.atlanta.example.com:5060;branch=z9hG4bK${seq}
Max-Forwards: 70
From: <sip:alice@atlanta.example.com>;tag=9fxced76sl
To: <sip:bob@biloxi.example.com>;tag=ourtag
Call-ID: 3848276298220188511@atlanta.example.com
CSeq: ${seq} ${method}
Contact: <sip:alice@192.0.2.77>
Content-Length: 0

`,
      ) as SipRequest;
    expect(dialog.admit(inDialog('INFO', 32))).toBe(true);
    expect(dialog.remoteSeq).toBe(32);
    expect(dialog.admit(inDialog('INFO', 30))).toBe(false);
    expect(dialog.remoteSeq).toBe(32);
    expect(dialog.admit(inDialog('ACK', 31))).toBe(true);
    expect(dialog.admit(inDialog('INFO', 32))).toBe(true);
    // A target refresh request moves the remote target; an INFO does not.
    dialog.refreshTarget(inDialog('INFO', 33));
    expect(dialog.remoteTarget).toBe('sip:alice@client.atlanta.example.com;transport=udp');
    dialog.refreshTarget(inDialog('INVITE', 34));
    expect(dialog.remoteTarget).toBe('sip:alice@192.0.2.77');
  });

  it('a UAS dialog whose peer has sent nothing yet takes any first CSeq', () => {
    const dialog = new Dialog({
      role: 'uas',
      state: 'confirmed',
      callId: 'c',
      localTag: 'l',
      remoteTag: 'r',
      localAddress: '<sip:l@x>;tag=l',
      remoteAddress: '<sip:r@y>;tag=r',
      localTarget: 'sip:l@x',
      remoteTarget: 'sip:r@y',
      routeSet: [],
      localSeq: null,
      remoteSeq: null,
      secure: false,
      pinned: null,
    });
    const request = dialog.createRequest('OPTIONS');
    expect(request.uri).toBe('sip:r@y');
    expect(request.headers.has('Route')).toBe(false);
    expect(dialog.admit(request)).toBe(true);
    expect(dialog.remoteSeq).toBe(request.cseq().seq);
  });
});

describe('the connection a dialog is pinned to', () => {
  const uas = (flow: Flow) =>
    Dialog.forUas(
      INVITE,
      message(`SIP/2.0 200 OK
Via: SIP/2.0/UDP client.atlanta.example.com:5060;branch=z9hG4bK74bf9
From: "Alice" <sip:alice@atlanta.example.com>;tag=9fxced76sl
To: Bob <sip:bob@biloxi.example.com>;tag=ourtag
Call-ID: 3848276298220188511@atlanta.example.com
CSeq: 31 INVITE
Contact: <sip:192.0.2.9:5060;transport=tcp>
Content-Length: 0

`) as SipResponse,
      flow,
    );
  const moved: Flow = {
    ...FLOW,
    remote: { address: '203.0.113.5', port: 50000 },
    connectionId: 'tcp-9',
  };

  it("follows the peer's request to another connection of its protocol", () => {
    const dialog = uas(FLOW);
    expect(dialog.follow(moved)).toBe(true);
    expect(dialog.pinned).toEqual({
      protocol: 'TCP',
      address: { address: '203.0.113.5', port: 50000 },
      connectionId: 'tcp-9',
    });
    expect(dialog.follow(moved)).toBe(false);
  });

  it("moves with a request on another connection only when its owner can find the peer again (a registered client's), never a trunk's", () => {
    const options = (seq: number) =>
      message(`OPTIONS sip:bob@192.0.2.9 SIP/2.0
Via: SIP/2.0/TCP client.atlanta.example.com:5060;branch=z9hG4bKo${seq}
Max-Forwards: 70
From: <sip:alice@atlanta.example.com>;tag=9fxced76sl
To: <sip:bob@biloxi.example.com>;tag=ourtag
Call-ID: 3848276298220188511@atlanta.example.com
CSeq: ${seq} OPTIONS
Content-Length: 0

`) as SipRequest;
    const layer = { allowed: () => ['INVITE', 'BYE'] } as unknown as DialogLayer;
    const on = (flow: Flow) => ({ flow, respond: () => undefined }) as unknown as ServerTransaction;
    const trunk = uas(FLOW);
    serveInDialog(layer, trunk, options(40), on(moved));
    expect(trunk.pinned?.connectionId).toBe('tcp-7');
    const client = uas(FLOW);
    client.delegate = { reachableAt: async () => null };
    serveInDialog(layer, client, options(40), on(moved));
    expect(client.pinned?.connectionId).toBe('tcp-9');
  });

  it('stays for a request on another protocol, or a dialog pinned to an address', () => {
    const dialog = uas(FLOW);
    expect(dialog.follow({ ...moved, protocol: 'TLS' })).toBe(false);
    expect(dialog.pinned?.connectionId).toBe('tcp-7');
    const overUdp = uas({ protocol: 'UDP', local: FLOW.local, remote: FLOW.remote });
    expect(overUdp.follow({ protocol: 'UDP', local: FLOW.local, remote: moved.remote })).toBe(
      false,
    );
    expect(overUdp.follow(moved)).toBe(false);
    expect(overUdp.pinned?.address).toEqual(FLOW.remote);
    // A UAC dialog sent to an address (a connection we opened) keeps that address.
    const tcpAddress: Destination = {
      protocol: 'TCP',
      address: { address: '192.0.2.1', port: 5060 },
    };
    const uac = Dialog.forUac(INVITE, answer(200), tcpAddress);
    expect(uac.repin({ ...tcpAddress, connectionId: 'tcp-3' })).toBe(false);
    expect(uac.pinned).toEqual(tcpAddress);
  });
});

describe('the end of a dialog', () => {
  it('terminates once, tells the channel, and cannot come back', () => {
    const dialog = Dialog.forUac(INVITE, answer(200), UDP);
    const ended: unknown[] = [];
    dialog.channel = {
      request: () => Promise.reject(new Error('unused')),
      bye: () => Promise.resolve(null),
      ended: (_d, end) => ended.push(end),
    };
    dialog.terminate({ kind: 'bye', by: 'local' });
    dialog.terminate({ kind: 'bye', by: 'remote' });
    expect(dialog.state).toBe('terminated');
    expect(ended).toEqual([{ kind: 'bye', by: 'local' }]);
    expect(() => dialog.confirm()).toThrow(/illegal state transition terminated -> confirmed/);
  });

  it('without a dialog layer it cannot send', () => {
    const dialog = Dialog.forUac(INVITE, answer(200), UDP);
    expect(() => dialog.request('INFO')).toThrow(/not kept by a dialog layer/);
  });
});
