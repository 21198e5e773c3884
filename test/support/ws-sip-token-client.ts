import { WebSocket } from 'ws';
import { SipRequest, SipResponse, parseMessage } from '../../src/sip/message/index.js';
import { ClientApp } from './client-app.js';
import { startGateway, type TestGateway } from './gateway.js';

/**
 * A SIP-over-WebSocket client as a browser SDK is one (RFC 7118): it registers an access
 * token's subject with `Authorization: Bearer`, keeps every request the gateway sends it, and
 * answers an INVITE 486 so that the call ends at once (or rings, or answers: `onInvite`). Any
 * other request but an ACK is answered 200.
 */
export class WsSipTokenClient {
  /** The requests the gateway sent on this connection, in order. */
  readonly received: SipRequest[] = [];
  private waiting: ((response: SipResponse) => void) | null = null;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: Buffer) => {
      const message = parseMessage(Buffer.from(data));
      if (message instanceof SipResponse) {
        this.waiting?.(message);
        return;
      }
      this.received.push(message);
      if (message.method === 'INVITE') {
        if (this.onInvite === 'answer') socket.send(answer(message));
        else if (this.onInvite === 'decline')
          socket.send(reply(message, 'SIP/2.0 603 Decline', 'declined'));
        else if (this.onInvite === 'silent') return;
        else if (this.onInvite === 'ring') {
          socket.send(ringing(message));
          this.ringing.set(message.callId(), message);
        } else socket.send(busy(message));
      } else if (message.method !== 'ACK') {
        socket.send(reply(message, 'SIP/2.0 200 OK', 'ok'));
        // RFC 3261 9.2: a CANCEL of an INVITE still ringing ends it 487.
        const invite = message.method === 'CANCEL' ? this.ringing.get(message.callId()) : undefined;
        if (invite) {
          this.ringing.delete(message.callId());
          socket.send(reply(invite, 'SIP/2.0 487 Request Terminated', 'ringing'));
        }
      }
    });
  }

  /**
   * What an INVITE gets: 486 (busy), a 180 left so until a CANCEL (ring), 603 (decline), a
   * 200 with a browser's WebRTC answer (no media will flow: Node has no WebRTC), or nothing at
   * all (silent: a client behind a connection gone half-open).
   */
  onInvite: 'busy' | 'ring' | 'answer' | 'decline' | 'silent' = 'busy';
  /** The INVITEs left ringing, by Call-ID, until cancelled. */
  private readonly ringing = new Map<string, SipRequest>();

  /** Sends a message as it is. */
  send(message: string): void {
    this.socket.send(message);
  }

  /** The next final response that comes (to a request sent with `send`). */
  nextResponse(): Promise<SipResponse> {
    return new Promise((resolve) => {
      this.waiting = (response) => {
        if (response.status < 200) return;
        this.waiting = null;
        resolve(response);
      };
    });
  }

  static async connect(url: string): Promise<WsSipTokenClient> {
    const socket = new WebSocket(url, ['sip']);
    socket.on('error', () => {});
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('unexpected-response', () => reject(new Error(`${url} refused the upgrade`)));
    });
    return new WsSipTokenClient(socket);
  }

  /** The final response to the last REGISTER. */
  lastRegisterResponse: SipResponse | null = null;

  /**
   * Registers `sub` with `token` (as `to`, its To user, `sub` unless given, for `expires`
   * seconds, 300 unless given); resolves with the final response's status.
   */
  register(
    sub: string,
    token: string,
    options: { to?: string; expires?: number; contact?: string } = {},
  ): Promise<number> {
    const request = [
      'REGISTER sip:127.0.0.1 SIP/2.0',
      `Via: SIP/2.0/WS ${sub}.invalid;branch=z9hG4bK${Math.random().toString(36).slice(2)}`,
      'Max-Forwards: 70',
      `From: <sip:${sub}@127.0.0.1>;tag=t${Math.random().toString(36).slice(2)}`,
      `To: <sip:${options.to ?? sub}@127.0.0.1>`,
      `Call-ID: reg-${Math.random().toString(36).slice(2)}`,
      'CSeq: 1 REGISTER',
      `Contact: <${options.contact ?? `sip:${sub}@${sub}.invalid;transport=ws`}>`,
      `Expires: ${options.expires ?? 300}`,
      `Authorization: Bearer ${token}`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    return new Promise((resolve) => {
      this.waiting = (response) => {
        if (response.status < 200) return;
        this.waiting = null;
        this.lastRegisterResponse = response;
        resolve(response.status);
      };
      this.socket.send(request);
    });
  }

  /**
   * INVITEs `target` (a user at 127.0.0.1) as `sub` with `token` and a browser's WebRTC offer
   * (no media will flow: Node has no WebRTC); resolves with the final response. Its 2xx is
   * ACKed.
   */
  invite(sub: string, target: string, token: string): Promise<SipResponse> {
    const branch = `z9hG4bK${Math.random().toString(36).slice(2)}`;
    const fromTag = `t${Math.random().toString(36).slice(2)}`;
    const callId = `call-${Math.random().toString(36).slice(2)}`;
    const sdp = [
      'v=0',
      'o=- 1 1 IN IP4 127.0.0.1',
      's=-',
      't=0 0',
      'a=group:BUNDLE 0',
      'm=audio 9 UDP/TLS/RTP/SAVPF 111',
      'c=IN IP4 0.0.0.0',
      'a=mid:0',
      'a=ice-ufrag:tokn',
      'a=ice-pwd:tokenclienttokenclient',
      `a=fingerprint:sha-256 ${Array.from({ length: 32 }, () => 'AB').join(':')}`,
      'a=setup:actpass',
      'a=rtcp-mux',
      'a=rtpmap:111 opus/48000/2',
      'a=sendrecv',
      '',
    ].join('\r\n');
    const request = [
      `INVITE sip:${target}@127.0.0.1 SIP/2.0`,
      `Via: SIP/2.0/WS ${sub}.invalid;branch=${branch}`,
      'Max-Forwards: 70',
      `From: <sip:${sub}@127.0.0.1>;tag=${fromTag}`,
      `To: <sip:${target}@127.0.0.1>`,
      `Call-ID: ${callId}`,
      'CSeq: 1 INVITE',
      `Contact: <sip:${sub}@${sub}.invalid;transport=ws>`,
      `Authorization: Bearer ${token}`,
      'Content-Type: application/sdp',
      `Content-Length: ${Buffer.byteLength(sdp)}`,
      '',
      sdp,
    ].join('\r\n');
    return new Promise((resolve) => {
      this.waiting = (response) => {
        if (response.status < 200) return;
        this.waiting = null;
        if (response.status < 300) {
          const toTag = /;tag=([^;>\s]+)/.exec(response.headers.get('To') ?? '')?.[1] ?? '';
          this.socket.send(
            [
              `ACK sip:${target}@127.0.0.1 SIP/2.0`,
              `Via: SIP/2.0/WS ${sub}.invalid;branch=z9hG4bK${Math.random().toString(36).slice(2)}`,
              'Max-Forwards: 70',
              `From: <sip:${sub}@127.0.0.1>;tag=${fromTag}`,
              `To: <sip:${target}@127.0.0.1>;tag=${toTag}`,
              `Call-ID: ${callId}`,
              'CSeq: 1 ACK',
              'Content-Length: 0',
              '',
              '',
            ].join('\r\n'),
          );
        }
        resolve(response);
      };
      this.socket.send(request);
    });
  }

  invites(): SipRequest[] {
    return this.received.filter((r) => r.method === 'INVITE');
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}

/** An access token for `sub` that may register (incoming calls), minted by `as`. */
export async function mintToken(
  gw: TestGateway,
  as: { id: string; token: string },
  sub: string,
  exp?: number,
  app?: string,
): Promise<string> {
  const res = await gw.request('POST', `/v1/Account/${as.id}/JWT/Token/`, {
    as,
    json: {
      iss: as.id,
      sub,
      per: { voice: { incoming_allow: true, outgoing_allow: true } },
      ...(exp !== undefined && { exp }),
      ...(app !== undefined && { app }),
    },
  });
  if (res.status !== 200) throw new Error(`JWT/Token/ answered ${res.status}: ${res.text}`);
  return res.body.token as string;
}

function ringing(invite: SipRequest): string {
  return reply(invite, 'SIP/2.0 180 Ringing', 'ringing');
}

/** A 200 with a WebRTC answer to the offer (a fingerprint no DTLS will ever check). */
function answer(invite: SipRequest): string {
  const offer = invite.body.toString('utf8');
  const mid = /^a=mid:(\S+)/m.exec(offer)?.[1] ?? '0';
  const sdp = [
    'v=0',
    'o=- 2 1 IN IP4 127.0.0.1',
    's=-',
    't=0 0',
    `a=group:BUNDLE ${mid}`,
    'm=audio 9 UDP/TLS/RTP/SAVPF 111',
    'c=IN IP4 0.0.0.0',
    `a=mid:${mid}`,
    'a=ice-ufrag:answ',
    'a=ice-pwd:tokenclientanswertokenclient',
    `a=fingerprint:sha-256 ${Array.from({ length: 32 }, () => 'CD').join(':')}`,
    'a=setup:active',
    'a=rtcp-mux',
    'a=rtpmap:111 opus/48000/2',
    'a=sendrecv',
    '',
  ].join('\r\n');
  // The INVITE came to the Contact it registered: its own, which it answers with.
  return reply(
    invite,
    'SIP/2.0 200 OK',
    'answered',
    [`Contact: <${invite.uri}>`, 'Content-Type: application/sdp'],
    sdp,
  );
}

function busy(invite: SipRequest): string {
  return reply(invite, 'SIP/2.0 486 Busy Here', 'busy');
}

function reply(
  request: SipRequest,
  statusLine: string,
  tag: string,
  extra: string[] = [],
  body = '',
): string {
  const rows = ['Via', 'From', 'To', 'Call-ID', 'CSeq'].flatMap((name) =>
    request.headers.getRows(name).map((value) => {
      if (name === 'To' && !/;tag=/.test(value)) return `To: ${value};tag=${tag}`;
      return `${name}: ${value}`;
    }),
  );
  return [
    statusLine,
    ...rows,
    ...extra,
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

/**
 * What a test file of token clients runs against: a gateway listening for SIP over WebSocket,
 * a client application, and the clients the file connects, closed together by `close`.
 */
export interface TokenClientGateway {
  gw: TestGateway;
  app: ClientApp;
  /** ws://127.0.0.1:port of the gateway's SIP over WebSocket. */
  wsUrl: string;
  /** A new client's connection, answering INVITEs as `onInvite` says. */
  client(onInvite?: WsSipTokenClient['onInvite']): Promise<WsSipTokenClient>;
  close(): Promise<void>;
}

export async function startTokenClientGateway(): Promise<TokenClientGateway> {
  const gw = await startGateway({ listen: true });
  const app = await ClientApp.start();
  const wsUrl = `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}`;
  const clients: WsSipTokenClient[] = [];
  return {
    gw,
    app,
    wsUrl,
    client: async (onInvite = 'busy') => {
      const c = await WsSipTokenClient.connect(wsUrl);
      c.onInvite = onInvite;
      clients.push(c);
      return c;
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
      await gw.close();
      await app.close();
    },
  };
}
