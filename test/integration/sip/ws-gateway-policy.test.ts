import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { answerDigestChallenge } from '../../../src/sip/auth/digest-client.js';
import { parseAlgorithm } from '../../../src/sip/auth/digest.js';
import { SipResponse, parseMessage } from '../../../src/sip/message/index.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';

/**
 * The gateway's SIP WebSocket listener as configured: the digest challenges a WebSocket
 * client gets with no configuration (taken by an RFC 8760 client as SHA-256), and the list
 * of page origins allowed to connect (VOXGATE_SIP_WS_ORIGINS).
 */
let gw: TestGateway;
let wsUrl: string;
const password = 'ws-secret-9';
let username: string;

beforeAll(async () => {
  gw = await startGateway({
    listen: true,
    env: { VOXGATE_SIP_WS_ORIGINS: 'https://phone.example.com, http://localhost:5173' },
  });
  wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
  const created = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
    json: { username: 'rfc8760', password, alias: 'rfc8760' },
  });
  username = created.body.username;
});

afterAll(async () => {
  await gw.close();
});

/** Opens a SIP WebSocket; resolves with it, or rejects with the HTTP status of a refusal. */
function connect(origin?: string): Promise<WebSocket> {
  const socket = new WebSocket(wsUrl, ['sip'], origin ? { origin } : {});
  socket.on('error', () => {});
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

let cseq = 1;
function register(authorization?: string): string {
  return [
    'REGISTER sip:127.0.0.1 SIP/2.0',
    `Via: SIP/2.0/WS k3x9.invalid;branch=z9hG4bK${Math.random().toString(36).slice(2)}`,
    'Max-Forwards: 70',
    `From: <sip:${username}@127.0.0.1>;tag=w1`,
    `To: <sip:${username}@127.0.0.1>`,
    'Call-ID: rfc8760-client',
    `CSeq: ${cseq++} REGISTER`,
    `Contact: <sip:${username}@k3x9.invalid;transport=ws>`,
    'Expires: 300',
    'User-Agent: rfc8760-client',
    ...(authorization ? [`Authorization: ${authorization}`] : []),
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

function exchange(socket: WebSocket, text: string): Promise<SipResponse> {
  return new Promise((resolve, reject) => {
    socket.once('message', (data) => {
      const message = parseMessage(Buffer.from(String(data)));
      if (message instanceof SipResponse) resolve(message);
      else reject(new Error('expected a response'));
    });
    socket.send(text);
  });
}

describe('the SIP WebSocket listener', () => {
  it('offers SHA-256 first: a client that takes the topmost it supports registers with it', async () => {
    const socket = await connect();
    try {
      const challenge = await exchange(socket, register());
      expect(challenge.status).toBe(401);
      const offers = challenge.wwwAuthenticate();
      expect(offers.map((c) => c.params.get('algorithm'))).toEqual(['SHA-256', 'MD5']);
      // RFC 8760 2.5: the topmost challenge this client supports.
      const chosen = offers.find((c) => parseAlgorithm(c.params.get('algorithm')) !== null)!;
      const authorization = answerDigestChallenge(
        {
          realm: chosen.params.get('realm')!,
          nonce: chosen.params.get('nonce')!,
          opaque: chosen.params.get('opaque'),
          algorithm: chosen.params.get('algorithm'),
          qop: chosen.params.get('qop'),
        },
        { username, password },
        { method: 'REGISTER', uri: 'sip:127.0.0.1' },
      )!;
      expect(authorization).toMatch(/algorithm=SHA-256/);
      const ok = await exchange(socket, register(authorization));
      expect(ok.status).toBe(200);
      const id = await endpointId();
      const view = await gw.request('GET', `/v1/Account/${gw.main.id}/Endpoint/${id}/`);
      expect(view.body).toMatchObject({
        sip_registered: 'true',
        sip_user_agent: 'rfc8760-client',
      });
    } finally {
      socket.close();
    }
  });

  it('lets pages of the listed origins connect, and clients that send no Origin', async () => {
    (await connect('https://phone.example.com')).close();
    (await connect('http://localhost:5173')).close();
    (await connect()).close();
  });

  it('answers a page of another origin 403 at the upgrade', async () => {
    await expect(connect('https://elsewhere.example.org')).rejects.toThrow('HTTP 403');
    await expect(connect('http://localhost:5174')).rejects.toThrow('HTTP 403');
  });
});

async function endpointId(): Promise<string | undefined> {
  const list = await gw.request('GET', `/v1/Account/${gw.main.id}/Endpoint/`);
  return (list.body.objects as { username: string; endpoint_id: string }[]).find(
    (e) => e.username === username,
  )?.endpoint_id;
}
