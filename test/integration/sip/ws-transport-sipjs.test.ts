import { Registerer, RegistererState, UserAgent } from 'sip.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lendWebSocketGlobal } from '../../support/sipjs-phone.js';
import { SipRequest, parseMessage } from '../../../src/sip/message/index.js';
import type { Flow } from '../../../src/sip/transport/flow.js';
import { WsTransport, type WsHandshake } from '../../../src/sip/transport/ws-transport.js';

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** The 200 a registrar would send: the request's dialog rows, a To tag, the Contact kept. */
function registered(request: SipRequest): Buffer {
  const rows = ['SIP/2.0 200 OK'];
  for (const name of ['Via', 'From', 'Call-ID', 'CSeq']) {
    for (const value of request.headers.getRows(name)) rows.push(`${name}: ${value}`);
  }
  rows.push(`To: ${request.headers.get('To')};tag=gw1`);
  for (const value of request.headers.getRows('Contact')) {
    rows.push(`Contact: ${value}${/;\s*expires=/i.test(value) ? '' : ';expires=600'}`);
  }
  rows.push('Content-Length: 0', '', '');
  return Buffer.from(rows.join('\r\n'));
}

/**
 * sip.js, a real SIP WebSocket client, over the transport. In Node it needs a WebSocket
 * implementation where a browser has one: ws's, put where sip.js looks for it.
 */
describe('sip.js over WsTransport', () => {
  let transport: WsTransport;
  const requests: [SipRequest, Flow][] = [];
  const handshakes: WsHandshake[] = [];
  const closed: Flow[] = [];
  let giveBack: () => void;
  beforeAll(async () => {
    giveBack = lendWebSocketGlobal();
    transport = await WsTransport.listen('127.0.0.1', 0, {
      onMessage: (data, flow) => {
        // RFC 7118 5.1: one message per WebSocket message, so it parses as a whole datagram.
        const message = parseMessage(data);
        if (!(message instanceof SipRequest)) return;
        requests.push([message, flow]);
        if (message.method === 'REGISTER') {
          void transport.send(registered(message), { connectionId: flow.connectionId! });
        }
      },
      onConnection: (_flow, handshake) => handshakes.push(handshake),
      onClose: (flow) => closed.push(flow),
    });
  });
  afterAll(async () => {
    await transport.close();
    giveBack();
  });

  it('connects with the sip subprotocol; its REGISTER parses, and our 200 registers it', async () => {
    const ua = new UserAgent({
      uri: UserAgent.makeURI('sip:alice@127.0.0.1'),
      transportOptions: { server: `ws://127.0.0.1:${transport.local.port}` },
      logBuiltinEnabled: false,
    });
    await ua.start();
    expect(handshakes).toHaveLength(1);
    expect(handshakes[0]!.headers['sec-websocket-protocol']).toBe('sip');

    const registerer = new Registerer(ua);
    const states: RegistererState[] = [];
    registerer.stateChange.addListener((state) => states.push(state));
    await registerer.register();
    await until(() => states.includes(RegistererState.Registered));
    expect(states).toContain(RegistererState.Registered);

    const [register, flow] = requests[0]!;
    expect(register.method).toBe('REGISTER');
    expect(register.requestUri()).toMatchObject({ scheme: 'sip', host: '127.0.0.1' });
    expect(register.topVia().transport).toBe('WS');
    expect(register.from().uri).toMatchObject({ user: 'alice', host: '127.0.0.1' });
    const contact = register.contact();
    expect(contact).not.toBe('*');
    expect((contact as Exclude<typeof contact, '*'>)[0]!.uri).toMatchObject({
      params: new Map([['transport', 'ws']]),
    });
    expect(flow).toMatchObject({ protocol: 'WS', remote: { address: '127.0.0.1' } });

    await ua.stop();
    await until(() => closed.length === 1);
    expect(closed[0]!.connectionId).toBe(flow.connectionId);
    // Stopping unregisters first: a REGISTER with expires 0 on the same connection.
    expect(requests.map(([r, f]) => [r.method, f.connectionId])).toEqual([
      ['REGISTER', flow.connectionId],
      ['REGISTER', flow.connectionId],
    ]);
    const removal = requests[1]![0].contact();
    expect(removal !== '*' && removal[0]!.params.get('expires')).toBe('0');
  });
});
