import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemScheduler } from '../../../src/core/scheduler.js';
import { SipResponse } from '../../../src/sip/message/index.js';
import { SipStack } from '../../../src/sip/sip-stack.js';
import { RawUdpPeer } from '../../support/sip-client.js';

let stack: SipStack;
let port: number;
let peer: RawUdpPeer;

beforeAll(async () => {
  stack = new SipStack({ scheduler: systemScheduler, publicHost: '127.0.0.1' });
  ({
    udp: { port },
  } = await stack.listenUdpTcp('127.0.0.1', 0));
  peer = await RawUdpPeer.open();
});

afterAll(async () => {
  peer.close();
  await stack.close();
});

function request(
  method: string,
  extra = '',
  branch = `z9hG4bK${Math.random().toString(36).slice(2)}`,
) {
  return `${method} sip:gw@127.0.0.1:${port} SIP/2.0
Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=${branch};rport
Max-Forwards: 70
From: <sip:alice@127.0.0.1>;tag=a1
To: <sip:gw@127.0.0.1>
Call-ID: ${branch}@test
CSeq: 1 ${method}
${extra}Content-Length: 0

`;
}

async function exchange(text: string): Promise<SipResponse> {
  const before = peer.received.length;
  peer.send(text, port);
  const all = await peer.waitFor(before + 1);
  const response = all[before];
  if (!(response instanceof SipResponse)) throw new Error('expected a response');
  return response;
}

describe('the UA core answers on the wire', () => {
  it('OPTIONS gets 200 with Allow, a To tag, and Via stamped with received and rport', async () => {
    const response = await exchange(request('OPTIONS'));
    expect(response.status).toBe(200);
    expect(response.headers.get('Allow')).toContain('OPTIONS');
    expect(response.to().tag).toMatch(/^[0-9a-f]{12}$/);
    const via = response.topVia();
    expect(via.params.get('rport')).toBe(String(peer.port));
    expect(via.params.get('received')).toBe('127.0.0.1');
  });

  it('a known method nobody handles gets 405 with Allow', async () => {
    const response = await exchange(request('SUBSCRIBE'));
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toContain('OPTIONS');
  });

  it('an unparsable request gets 400 whose reason names the fault', async () => {
    const response = await exchange(request('OPTIONS', 'CSeq: 2 OPTIONS\n'));
    expect(response.status).toBe(400);
    expect(response.reason).toBe('Multiple CSeq headers');
  });

  it('an unknown Require tag gets 420 listing it in Unsupported', async () => {
    const response = await exchange(request('OPTIONS', 'Require: nothingSupportsThis\n'));
    expect(response.status).toBe(420);
    expect(response.headers.get('Unsupported')).toBe('nothingSupportsThis');
  });

  it('a BYE for no dialog gets 481', async () => {
    const response = await exchange(
      request('BYE').replace('To: <sip:gw@127.0.0.1>', 'To: <sip:gw@127.0.0.1>;tag=nope'),
    );
    expect(response.status).toBe(481);
  });

  it('a retransmitted request gets the same response again, not a second handling', async () => {
    const text = request('OPTIONS', '', 'z9hG4bKretransmit1');
    const first = await exchange(text);
    const second = await exchange(text);
    expect(second.toString()).toBe(first.toString());
  });
});
