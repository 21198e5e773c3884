import { createConnection, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SipResponse, parseMessage } from '../../../src/sip/message/index.js';
import { freePort } from '../../support/free-port.js';
import { spawnGateway, type GatewayProcess } from '../../support/gateway-process.js';

/**
 * A browser (or anything speaking SIP over WebSocket) that sends a request the gateway cannot
 * parse and resets its TCP connection at once. The gateway answers such a request with a 400
 * on the connection it came on; that connection is gone by then, and a WebSocket client cannot
 * be dialled back, so the send fails. The failure must be logged, not left as an unhandled
 * rejection: that ends the process, and with it every call on the node.
 */
const AUTH_ID = 'MA' + 'WSRESETAAAAAAAAAAA';
const AUTH_TOKEN = 'wsResetTokenNeverPrinted0123456789abcdefgh'.slice(0, 40);
const ROUNDS = 50;

let gateway: GatewayProcess;
let wsPort: number;

beforeAll(async () => {
  wsPort = await freePort();
  gateway = await spawnGateway({
    VOXGATE_SIP_HOST: '127.0.0.1',
    VOXGATE_SIP_PORT: String(await freePort()),
    VOXGATE_SIP_WS_PORT: String(wsPort),
    VOXGATE_DATA_DIR: '',
    VOXGATE_MEDIA_WORKERS: '1',
    VOXGATE_AUTH_ID: AUTH_ID,
    VOXGATE_AUTH_TOKEN: AUTH_TOKEN,
    VOXGATE_LOG_LEVEL: 'warn',
  });
  await gateway.healthy();
}, 60_000);

afterAll(async () => {
  // stop() throws when the process reported an unhandled rejection.
  if (gateway) await gateway.stop();
});

function options(cseq: string): string {
  return [
    'OPTIONS sip:x SIP/2.0',
    `Via: SIP/2.0/WS reset.invalid;branch=z9hG4bK${Math.random().toString(36).slice(2)}`,
    'Max-Forwards: 70',
    'From: <sip:probe@reset.invalid>;tag=r1',
    'To: <sip:x>',
    `Call-ID: reset-${Math.random().toString(36).slice(2)}`,
    `CSeq: ${cseq}`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

/**
 * A WebSocket text frame as a client sends it (RFC 6455 5.2: FIN, opcode 1, masked). Written
 * by hand so that the frame and the TCP reset leave in one go, before the gateway answers.
 */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const length =
    payload.length < 126
      ? Buffer.from([0x80 | payload.length])
      : Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from([0x81]), length, mask, masked]);
}

/** Opens a raw SIP WebSocket handshake; resolves with the socket once the 101 is read. */
function handshake(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port: wsPort });
    socket.on('error', reject);
    socket.once('connect', () =>
      socket.write(
        'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
          'Sec-WebSocket-Protocol: sip\r\n\r\n',
      ),
    );
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      if (!head.startsWith('HTTP/1.1 101')) reject(new Error(head.split('\r\n')[0]));
      else resolve(socket);
    };
    socket.on('data', onData);
  });
}

/** One good OPTIONS over a fresh WebSocket: resolves with the gateway's final response. */
async function goodOptions(): Promise<SipResponse> {
  const socket = new WebSocket(`ws://127.0.0.1:${wsPort}`, ['sip']);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  try {
    const answer = new Promise<SipResponse>((resolve) =>
      socket.once('message', (data: Buffer) => resolve(parseMessage(data) as SipResponse)),
    );
    socket.send(options('1 OPTIONS'));
    return await answer;
  } finally {
    socket.close();
  }
}

describe('a SIP WebSocket client that sends an unparsable request and resets', () => {
  it('leaves the gateway running and answering SIP and REST', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const socket = await handshake();
      socket.on('error', () => {}); // the reset is ours
      socket.write(textFrame(options('nonsense OPTIONS')));
      socket.resetAndDestroy();
      // Give the gateway the moment it needs to read the frame and try to answer it.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(gateway.child.exitCode, gateway.stderr()).toBeNull();
    expect(gateway.stderr()).not.toMatch(/unhandled rejection/i);
    const answer = await goodOptions();
    expect(answer.status).toBe(200);
    const rest = await fetch(`http://127.0.0.1:${gateway.port}/v1/Account/${AUTH_ID}/`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${AUTH_ID}:${AUTH_TOKEN}`).toString('base64')}`,
      },
    });
    expect(rest.status).toBe(200);
    // The failed answers were reported as warnings.
    expect(gateway.stdout()).toMatch(/could not send a 400 to an unparsable request to WS/);
  }, 120_000);
});
