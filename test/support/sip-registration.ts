import { connect as connectTcp, type Socket } from 'node:net';
import { WebSocket } from 'ws';
import { answerDigestChallenge } from '../../src/sip/auth/digest-client.js';
import { parseAlgorithm } from '../../src/sip/auth/digest.js';
import { SipResponse, parseMessage } from '../../src/sip/message/index.js';
import { RawUdpPeer } from './sip-client.js';

/** A client's SIP connection to a gateway: what its Via and Contact say, and a request-response exchange. */
export interface SipChannel {
  transport: 'UDP' | 'TCP' | 'WS';
  /** host:port for the Via and Contact (an .invalid host on WebSocket, RFC 7118). */
  sentBy: string;
  exchange(text: string): Promise<SipResponse>;
  close(): void;
}

/** A UDP client of a gateway's SIP port on 127.0.0.1. */
export async function udpChannel(port: number): Promise<SipChannel> {
  const peer = await RawUdpPeer.open();
  return {
    transport: 'UDP',
    sentBy: `127.0.0.1:${peer.port}`,
    exchange: async (text) => {
      const before = peer.received.length;
      peer.send(text, port);
      return asResponse((await peer.waitFor(before + 1))[before]);
    },
    close: () => peer.close(),
  };
}

/** A TCP connection to a gateway's SIP port on 127.0.0.1 (answers without a body). */
export async function tcpChannel(port: number): Promise<SipChannel> {
  const socket: Socket = connectTcp(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let buffered = Buffer.alloc(0);
  return {
    transport: 'TCP',
    sentBy: `127.0.0.1:${socket.localPort}`,
    exchange: (text) =>
      new Promise((resolve) => {
        const read = (data: Buffer) => {
          buffered = Buffer.concat([buffered, data]);
          const end = buffered.indexOf('\r\n\r\n');
          if (end < 0) return;
          socket.off('data', read);
          const message = buffered.subarray(0, end + 4);
          buffered = buffered.subarray(end + 4);
          resolve(asResponse(parseMessage(message)));
        };
        socket.on('data', read);
        socket.write(text);
      }),
    close: () => socket.destroy(),
  };
}

/** A SIP WebSocket (subprotocol sip) to a gateway on 127.0.0.1. */
export async function wsChannel(port: number): Promise<SipChannel> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}`, ['sip']);
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  return {
    transport: 'WS',
    sentBy: `${Math.random().toString(36).slice(2, 10)}.invalid`,
    exchange: (text) =>
      new Promise((resolve) => {
        socket.once('message', (data) =>
          resolve(asResponse(parseMessage(Buffer.from(String(data))))),
        );
        socket.send(text);
      }),
    close: () => socket.terminate(),
  };
}

let cseq = 1;

/**
 * Registers an endpoint's contact over `channel` (digest, the first algorithm offered that the
 * client supports), with `path` as Path headers (as a proxy in front would add); resolves with
 * the final response.
 */
export async function registerEndpoint(
  channel: SipChannel,
  endpoint: { username: string; password: string },
  options: { path?: string[]; expires?: number } = {},
): Promise<SipResponse> {
  const { username, password } = endpoint;
  const callId = `${username}-${channel.transport}-${Math.random().toString(36).slice(2)}`;
  const contact =
    channel.transport === 'WS'
      ? `<sip:${username}@${channel.sentBy};transport=ws>`
      : `<sip:${username}@${channel.sentBy};transport=${channel.transport.toLowerCase()}>`;
  const request = (authorization?: string) =>
    [
      'REGISTER sip:127.0.0.1 SIP/2.0',
      `Via: SIP/2.0/${channel.transport} ${channel.sentBy};branch=z9hG4bK${Math.random().toString(36).slice(2)};rport`,
      'Max-Forwards: 70',
      `From: <sip:${username}@127.0.0.1>;tag=r1`,
      `To: <sip:${username}@127.0.0.1>`,
      `Call-ID: ${callId}`,
      `CSeq: ${cseq++} REGISTER`,
      `Contact: ${contact}`,
      `Expires: ${options.expires ?? 300}`,
      ...(options.path ?? []).map((p) => `Path: ${p}`),
      ...(authorization ? [`Authorization: ${authorization}`] : []),
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
  const challenge = await channel.exchange(request());
  if (challenge.status !== 401) return challenge;
  const offer = challenge
    .wwwAuthenticate()
    .find((c) => parseAlgorithm(c.params.get('algorithm')) !== null)!;
  const authorization = answerDigestChallenge(
    {
      realm: offer.params.get('realm')!,
      nonce: offer.params.get('nonce')!,
      opaque: offer.params.get('opaque'),
      algorithm: offer.params.get('algorithm'),
      qop: offer.params.get('qop'),
    },
    { username, password },
    { method: 'REGISTER', uri: 'sip:127.0.0.1' },
  )!;
  return channel.exchange(request(authorization));
}

function asResponse(message: unknown): SipResponse {
  if (!(message instanceof SipResponse)) throw new Error('expected a SIP response');
  return message;
}
