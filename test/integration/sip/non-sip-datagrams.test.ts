import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMessage, type SipResponse } from '../../../src/sip/message/index.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { seededRandom } from '../../support/prng.js';
import { until } from '../../support/wait.js';

/**
 * What reaches the gateway's SIP UDP port and is not SIP (a stray byte, noise, an HTTP request,
 * a STUN Binding request) is dropped without a reply, counted on /metrics and logged at most
 * once in a while; SIP still gets its answers, a malformed SIP request its 400 (never larger
 * than the request).
 */
let gw: TestGateway;
let socket: Socket;
let sipPort: number;
const received: Buffer[] = [];

beforeAll(async () => {
  gw = await startGateway({ listen: true });
  sipPort = gw.gateway.sip.addresses.udp.port;
  socket = createSocket('udp4');
  socket.on('message', (data) => received.push(data));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  socket.close();
  await gw.close();
});

const send = (data: Buffer) =>
  new Promise<void>((resolve, reject) =>
    socket.send(data, sipPort, '127.0.0.1', (error) => (error ? reject(error) : resolve())),
  );

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'latin1');

function sipRequest(method: string, branch: string, extra: string[] = []): Buffer {
  const port = socket.address().port;
  return crlf([
    `${method} sip:gateway@127.0.0.1:${sipPort} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK${branch};rport`,
    'Max-Forwards: 70',
    `From: <sip:probe@127.0.0.1>;tag=${branch}`,
    'To: <sip:gateway@127.0.0.1>',
    `Call-ID: ${branch}@127.0.0.1`,
    `CSeq: 1 ${method}`,
    ...extra,
    'Content-Length: 0',
    '',
    '',
  ]);
}

function stunBindingRequest(): Buffer {
  const packet = Buffer.alloc(20);
  packet.writeUInt16BE(0x0001, 0); // Binding request
  packet.writeUInt16BE(0, 2); // no attributes
  packet.writeUInt32BE(0x2112a442, 4); // the magic cookie (RFC 5389 6)
  Buffer.from('voxgate-test').copy(packet, 8); // 96-bit transaction id
  return packet;
}

async function nonSipCount(): Promise<number> {
  const metrics = await gw.request('GET', '/metrics', { as: null });
  const line = /^voxgate_sip_non_sip_received_total\{transport="UDP"\} (\d+)$/m.exec(metrics.text);
  return line ? Number(line[1]) : 0;
}

const nonSipLines = () =>
  gw.logs.map((line) => JSON.parse(line)).filter((entry) => /non-SIP/.test(entry.msg));

describe('non-SIP datagrams on the SIP UDP port', () => {
  it('are dropped unanswered, counted and logged once, while SIP is still answered', async () => {
    const random = seededRandom(5060);
    const noise = Buffer.from(Array.from({ length: 300 }, () => Math.floor(random() * 256)));
    const junk = [
      Buffer.from([0x41]),
      noise,
      crlf(['GET / HTTP/1.1', 'Host: 127.0.0.1', '', '']),
      stunBindingRequest(),
    ];
    const before = await nonSipCount();
    for (const datagram of junk) await send(datagram);
    // A CRLF keepalive is not junk: dropped, neither answered nor counted.
    await send(Buffer.from('\r\n\r\n'));
    await send(sipRequest('OPTIONS', 'options1'));

    await until(() => received.length > 0, 3000);
    // Datagrams on loopback are read in order: the OPTIONS came after all of the junk.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(received).toHaveLength(1);
    const answer = parseMessage(received[0]!) as SipResponse;
    expect(answer.status).toBe(200);
    expect(answer.cseq().method).toBe('OPTIONS');

    expect((await nonSipCount()) - before).toBe(junk.length);
    const lines = nonSipLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, count: 1, sip: true });
    expect(lines[0].last).toBe(`UDP 127.0.0.1:${socket.address().port}`);
    expect(gw.logs.filter((line) => line.includes('discarded a message'))).toEqual([]);
  });

  it('answers a malformed SIP request with a 400 no larger than the request', async () => {
    received.length = 0;
    const bad = sipRequest('OPTIONS', 'options2', ['Expires: soon']);
    await send(bad);
    await until(() => received.length > 0, 3000);
    expect(received).toHaveLength(1);
    const answer = parseMessage(received[0]!) as SipResponse;
    expect(answer.status).toBe(400);
    expect(answer.headers.get('Call-ID')).toBe('options2@127.0.0.1');
    expect(received[0]!.length).toBeLessThanOrEqual(bad.length);
    // Junk still counts as junk, not as a malformed request, and is still not answered.
    const before = await nonSipCount();
    await send(Buffer.from([0x00]));
    await until(async () => (await nonSipCount()) === before + 1, 3000);
    expect(received).toHaveLength(1);
    // Within the log's interval: still the one line.
    expect(nonSipLines()).toHaveLength(1);
  });
});
