import {
  Registerer,
  SessionState,
  UserAgent,
  type Invitation,
  type SessionDescriptionHandler,
} from 'sip.js';
import { WebSocket } from 'ws';
import type { TestGateway } from './gateway.js';

/**
 * Gives sip.js, which looks for a browser's WebSocket class on globalThis, ws's (Node 20 has
 * none); the returned function puts back what was there, so the files that share the process
 * see it unchanged.
 */
export function lendWebSocketGlobal(): () => void {
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'WebSocket');
  Object.defineProperty(globalThis, 'WebSocket', { value: WebSocket, configurable: true });
  return () => {
    if (saved) Object.defineProperty(globalThis, 'WebSocket', saved);
    else Reflect.deleteProperty(globalThis, 'WebSocket');
  };
}

/**
 * sip.js 0.21 as a WebSocket softphone in Node (RFC 7118): it registers with digest
 * credentials and answers every call at once. Node has no WebRTC, so the session description
 * handler is a plain one: it takes the offer as it is and answers PCMU towards `rtpPort` (a
 * test's RTP socket). sip.js needs a WebSocket class on globalThis (ws's, in Node 20).
 */
export interface SipjsPhoneOptions {
  /** ws://host:port of the registrar or proxy. */
  server: string;
  /** The address of record, sip:user@domain. */
  aor: string;
  username: string;
  password: string;
  /** Where the answers send the call's audio. */
  rtpPort: number;
}

export interface SipjsPhone {
  /** Every state each answered call went through, in order (Establishing, Established...). */
  calls: SessionState[][];
  /** The INVITEs it was offered, as sip.js read them (Request-URI, From, headers). */
  invites: Invitation[];
  /** Resolves once registered (a 2xx to its REGISTER), rejects if refused. */
  register(): Promise<void>;
  /**
   * Drops its WebSocket connection without unregistering (as a network change does),
   * connects again and registers again, as sip.js's reconnection does; its calls go on.
   */
  reconnect(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Answers with PCMU (and telephone-event when offered) at 127.0.0.1:port. voxgate offers a
 * phone on WebSocket WebRTC's profile (it takes it for a browser): the answer then has that
 * profile and its lines, with credentials and a fingerprint no media will ever use, since
 * Node has no WebRTC (the call is set up; its media never connects).
 */
function answerTo(offer: string, port: number): string {
  const dtmf = /^a=rtpmap:(\d+) telephone-event\/8000/m.exec(offer)?.[1];
  const webrtc = /^m=audio \d+ UDP\/TLS\/RTP\/SAVPF /m.test(offer);
  const mid = /^a=mid:(\S+)/m.exec(offer)?.[1] ?? '0';
  return [
    'v=0',
    `o=sipjs ${Date.now()} 1 IN IP4 127.0.0.1`,
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    ...(webrtc ? [`a=group:BUNDLE ${mid}`] : []),
    `m=audio ${port} ${webrtc ? 'UDP/TLS/RTP/SAVPF' : 'RTP/AVP'} 0${dtmf ? ` ${dtmf}` : ''}`,
    ...(webrtc
      ? [
          `a=mid:${mid}`,
          'a=ice-ufrag:nodephone',
          'a=ice-pwd:nodephonenodephonenodephone',
          `a=fingerprint:sha-256 ${Array.from({ length: 32 }, () => 'AB').join(':')}`,
          'a=setup:passive',
          'a=rtcp-mux',
        ]
      : []),
    'a=rtpmap:0 PCMU/8000',
    ...(dtmf ? [`a=rtpmap:${dtmf} telephone-event/8000`, `a=fmtp:${dtmf} 0-15`] : []),
    'a=ptime:20',
    'a=sendrecv',
    '',
  ].join('\r\n');
}

class PlainDescriptions implements SessionDescriptionHandler {
  private offer: string | null = null;

  constructor(private readonly rtpPort: number) {}

  close(): void {}

  async getDescription() {
    if (this.offer === null) throw new Error('this phone only answers offers');
    return { body: answerTo(this.offer, this.rtpPort), contentType: 'application/sdp' };
  }

  hasDescription(contentType: string): boolean {
    return contentType === 'application/sdp';
  }

  async setDescription(sdp: string): Promise<void> {
    this.offer = sdp;
  }

  sendDtmf(): boolean {
    return false;
  }
}

export async function startSipjsPhone(options: SipjsPhoneOptions): Promise<SipjsPhone> {
  const calls: SessionState[][] = [];
  const invites: Invitation[] = [];
  const ua = new UserAgent({
    uri: UserAgent.makeURI(options.aor),
    transportOptions: { server: options.server },
    authorizationUsername: options.username,
    authorizationPassword: options.password,
    logBuiltinEnabled: false,
    sessionDescriptionHandlerFactory: () => new PlainDescriptions(options.rtpPort),
    delegate: {
      onInvite: (invitation) => {
        invites.push(invitation);
        const states: SessionState[] = [];
        calls.push(states);
        invitation.stateChange.addListener((state) => states.push(state));
        void invitation.accept().catch(() => {});
      },
    },
  });
  await ua.start();
  const registerer = new Registerer(ua);
  const register = () =>
    new Promise<void>((resolve, reject) => {
      registerer
        .register({
          requestDelegate: {
            onAccept: () => resolve(),
            onReject: (response) =>
              reject(new Error(`sip.js did not register: ${response.message.statusCode}`)),
          },
        })
        .catch(reject);
    });
  return {
    calls,
    invites,
    register,
    reconnect: async () => {
      await ua.transport.disconnect();
      await ua.reconnect();
      await register();
    },
    stop: async () => {
      await registerer.unregister().catch(() => {});
      await ua.stop();
    },
  };
}

/**
 * A new endpoint of the gateway's main account (through the API, its username made from
 * `username`) and `count` sip.js phones for it on `server` (not registered yet), each with a
 * Contact of its own.
 */
export async function endpointPhones(
  gw: TestGateway,
  server: string,
  username: string,
  count = 1,
): Promise<{ username: string; phones: SipjsPhone[] }> {
  const password = `${username}-Secret1`;
  const created = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
    json: { username, password, alias: username },
  });
  if (created.status !== 201)
    throw new Error(`Endpoint/ answered ${created.status}: ${created.text}`);
  const user = created.body.username as string;
  const aor = `sip:${user}@127.0.0.1`;
  const phones = await Promise.all(
    Array.from({ length: count }, () =>
      startSipjsPhone({ server, aor, username: user, password, rtpPort: 9 }),
    ),
  );
  return { username: user, phones };
}
