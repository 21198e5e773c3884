import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import type { Flow } from '../../../src/sip/transport/flow.js';
import { UdpTransport } from '../../../src/sip/transport/udp-transport.js';

describe('UdpTransport', () => {
  let transport: UdpTransport | undefined;
  afterEach(async () => {
    await transport?.close();
  });

  it('receives datagrams with their flow, drops CRLF keepalives, and sends back to a peer', async () => {
    const got: [string, Flow][] = [];
    transport = await UdpTransport.listen('127.0.0.1', 0, {
      onMessage: (d, f) => got.push([d.toString(), f]),
    });
    const peer = createSocket('udp4');
    await new Promise<void>((r) => peer.bind(0, '127.0.0.1', r));
    const reply = new Promise<string>((r) => peer.once('message', (m) => r(m.toString())));
    const peerPort = peer.address().port;
    peer.send('\r\n\r\n', transport.local.port, '127.0.0.1');
    peer.send('OPTIONS sip:x SIP/2.0\r\n\r\n', transport.local.port, '127.0.0.1');
    for (let i = 0; i < 50 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(got).toHaveLength(1);
    expect(got[0]![0]).toBe('OPTIONS sip:x SIP/2.0\r\n\r\n');
    expect(got[0]![1]).toEqual({
      protocol: 'UDP',
      local: { address: '127.0.0.1', port: transport.local.port },
      remote: { address: '127.0.0.1', port: peerPort },
    });
    transport.send(Buffer.from('SIP/2.0 200 OK\r\n\r\n'), { address: '127.0.0.1', port: peerPort });
    expect(await reply).toBe('SIP/2.0 200 OK\r\n\r\n');
    peer.close();
  });

  it('refuses a message too large for a datagram', async () => {
    transport = await UdpTransport.listen('127.0.0.1', 0, { onMessage: () => {} });
    expect(() => transport!.send(Buffer.alloc(70_000), { address: '127.0.0.1', port: 9 })).toThrow(
      'too large for UDP',
    );
  });
});
