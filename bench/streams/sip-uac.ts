import { createSocket, type Socket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import type { WebrtcAnswer, WebrtcOffer } from './webrtc-caller.js';

/** A call the gateway answered: where to send its ACK and BYE, and its RTP. */
export interface Dialog {
  callId: string;
  fromTag: string;
  /** The To header of the 200, with the gateway's tag. */
  to: string;
  /** The Contact URI of the 200: the Request-URI of the ACK and the BYE. */
  target: string;
  remoteRtpPort: number;
  remoteRtpHost: string;
  /** INVITE sent to 200 received, ms. */
  answerMs: number;
  /** performance.now() when the 200 came. */
  answeredAt: number;
  /** A WebRTC call's answered transport. */
  webrtc?: WebrtcAnswer;
  /** Set when the gateway sent a BYE itself. */
  endedByGateway: boolean;
}

export type InviteResult = { ok: true; dialog: Dialog } | { ok: false; reason: string };

interface Parsed {
  status: number | null;
  method: string | null;
  headers: Map<string, string[]>;
  /** The header lines as they came, for answering a request. */
  lines: string[];
  body: string;
}

const COMPACT: Record<string, string> = {
  v: 'via',
  f: 'from',
  t: 'to',
  i: 'call-id',
  m: 'contact',
  l: 'content-length',
  c: 'content-type',
};

/** Enough of RFC 3261 parsing for the gateway's answers: start line, headers, body. */
function parse(data: Buffer): Parsed | null {
  const text = data.toString('latin1');
  const split = text.indexOf('\r\n\r\n');
  if (split === -1) return null;
  const lines = text.slice(0, split).split('\r\n');
  const start = lines.shift() ?? '';
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const raw = line.slice(0, colon).trim().toLowerCase();
    const name = COMPACT[raw] ?? raw;
    const values = headers.get(name) ?? [];
    values.push(line.slice(colon + 1).trim());
    headers.set(name, values);
  }
  const status = /^SIP\/2\.0 (\d{3})/.exec(start);
  return {
    status: status ? Number(status[1]) : null,
    method: status ? null : (start.split(' ')[0] ?? null),
    headers,
    lines,
    body: text.slice(split + 4),
  };
}

const first = (p: Parsed, name: string) => p.headers.get(name)?.[0] ?? '';

interface PendingInvite {
  callId: string;
  fromTag: string;
  request: string;
  sentAt: number;
  provisional: boolean;
  retransmit: NodeJS.Timeout | null;
  timeout: NodeJS.Timeout;
  resolve(result: InviteResult): void;
}

/** INVITE retransmission over UDP: T1, doubling, until a response (RFC 3261 17.1.1.2). */
const T1_MS = 500;

/**
 * A SIP caller for many calls at once over one UDP socket: INVITE with an SDP offer (PCMU and
 * telephone-event), 100/180 noted, the 200 answered with an ACK to its Contact (again for a
 * 200 sent again), BYE at the end retransmitted until its 200, and a BYE from the gateway
 * answered with 200.
 */
export class SipUac {
  private readonly invites = new Map<string, PendingInvite>();
  private readonly dialogs = new Map<string, Dialog>();
  private readonly byes = new Map<string, () => void>();
  private sequence = 0;

  /** This caller's address as its Via, Contact and SDP give it. */
  private readonly local: string;

  private constructor(
    private readonly socket: Socket,
    private readonly port: number,
    private readonly gatewayHost: string,
    private readonly gatewayPort: number,
    private readonly localHost: string,
    private readonly runId: string,
  ) {
    this.local = `${localHost}:${port}`;
    socket.on('message', (data) => this.receive(data));
  }

  /** A caller bound on `localHost` that calls the gateway's SIP listener (IPv4 both). */
  static async open(
    gatewayHost: string,
    gatewayPort: number,
    localHost = '127.0.0.1',
  ): Promise<SipUac> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, localHost, () => resolve()));
    socket.setRecvBufferSize(4 << 20);
    const runId = Math.random().toString(36).slice(2, 10);
    return new SipUac(socket, socket.address().port, gatewayHost, gatewayPort, localHost, runId);
  }

  /**
   * Calls `number`, offering RTP on `rtpPort` (PCMU), or WebRTC's (ICE, DTLS-SRTP, Opus) with
   * `webrtc`; resolves when answered, refused or timed out.
   */
  invite(
    number: string,
    rtpPort: number,
    timeoutMs: number,
    webrtc?: WebrtcOffer,
  ): Promise<InviteResult> {
    const n = ++this.sequence;
    const callId = `sb-${this.runId}-${n}@${this.localHost}`;
    const fromTag = `sb-${n}`;
    const local = this.local;
    const sdp = [
      'v=0',
      `o=bench ${n} 1 IN IP4 ${this.localHost}`,
      's=voxgate streams bench',
      `c=IN IP4 ${this.localHost}`,
      't=0 0',
      ...(webrtc ? webrtcMedia(rtpPort, this.localHost, webrtc) : plainMedia(rtpPort)),
      'a=ptime:20',
      'a=sendrecv',
      '',
    ].join('\r\n');
    const request = [
      `INVITE sip:${number}@${this.gatewayHost}:${this.gatewayPort} SIP/2.0`,
      `Via: SIP/2.0/UDP ${local};branch=z9hG4bK-${fromTag}-i;rport`,
      'Max-Forwards: 70',
      `From: "streams bench" <sip:bench@${local}>;tag=${fromTag}`,
      `To: <sip:${number}@${this.gatewayHost}:${this.gatewayPort}>`,
      `Call-ID: ${callId}`,
      'CSeq: 1 INVITE',
      `Contact: <sip:bench@${local};transport=udp>`,
      'User-Agent: voxgate-streams-bench',
      'Content-Type: application/sdp',
      `Content-Length: ${Buffer.byteLength(sdp)}`,
      '',
      sdp,
    ].join('\r\n');
    return new Promise<InviteResult>((resolve) => {
      const pending: PendingInvite = {
        callId,
        fromTag,
        request,
        sentAt: performance.now(),
        provisional: false,
        retransmit: null,
        timeout: setTimeout(
          () => this.settle(callId, { ok: false, reason: 'no answer' }),
          timeoutMs,
        ),
        resolve,
      };
      this.invites.set(callId, pending);
      const resend = (interval: number) => {
        pending.retransmit = setTimeout(() => {
          if (pending.provisional || !this.invites.has(callId)) return;
          this.send(request);
          resend(Math.min(interval * 2, 4000));
        }, interval);
      };
      this.send(request);
      resend(T1_MS);
    });
  }

  /** Hangs up; resolves true on the BYE's 200 (or when the gateway had hung up already). */
  bye(dialog: Dialog, timeoutMs = 8000): Promise<boolean> {
    this.dialogs.delete(dialog.callId);
    if (dialog.endedByGateway) return Promise.resolve(true);
    const local = this.local;
    const request = [
      `BYE ${dialog.target} SIP/2.0`,
      `Via: SIP/2.0/UDP ${local};branch=z9hG4bK-${dialog.fromTag}-b;rport`,
      'Max-Forwards: 70',
      `From: "streams bench" <sip:bench@${local}>;tag=${dialog.fromTag}`,
      `To: ${dialog.to}`,
      `Call-ID: ${dialog.callId}`,
      'CSeq: 2 BYE',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    return new Promise<boolean>((resolve) => {
      let interval = T1_MS;
      let timer: NodeJS.Timeout;
      const done = (ok: boolean) => {
        clearTimeout(timer);
        clearTimeout(deadline);
        this.byes.delete(dialog.callId);
        resolve(ok);
      };
      const deadline = setTimeout(() => done(false), timeoutMs);
      const resend = () => {
        this.send(request);
        timer = setTimeout(resend, interval);
        interval = Math.min(interval * 2, 4000);
      };
      this.byes.set(dialog.callId, () => done(true));
      resend();
    });
  }

  close(): void {
    for (const callId of [...this.invites.keys()])
      this.settle(callId, { ok: false, reason: 'closed' });
    this.socket.close();
  }

  private send(text: string, port = this.gatewayPort, host = this.gatewayHost): void {
    this.socket.send(Buffer.from(text, 'latin1'), port, host);
  }

  private settle(callId: string, result: InviteResult): void {
    const pending = this.invites.get(callId);
    if (!pending) return;
    this.invites.delete(callId);
    clearTimeout(pending.timeout);
    if (pending.retransmit) clearTimeout(pending.retransmit);
    pending.resolve(result);
  }

  private receive(data: Buffer): void {
    const message = parse(data);
    if (!message) return;
    const callId = first(message, 'call-id');
    if (message.method !== null) {
      this.answerRequest(message, callId);
      return;
    }
    const status = message.status ?? 0;
    const method = first(message, 'cseq').split(/\s+/)[1];
    if (method === 'BYE') {
      if (status >= 200) this.byes.get(callId)?.();
      return;
    }
    if (method !== 'INVITE') return;
    const pending = this.invites.get(callId);
    if (status < 200) {
      if (pending) pending.provisional = true;
      return;
    }
    const to = first(message, 'to');
    if (status >= 300) {
      // The ACK of a refusal goes to the INVITE's Request-URI, in its transaction.
      if (pending) {
        const uri = pending.request.slice(7, pending.request.indexOf(' SIP/2.0'));
        this.ack(uri, pending.fromTag, to, callId, 'i');
      }
      this.settle(callId, { ok: false, reason: `${status} ${reasonPhrase(data)}` });
      return;
    }
    const target = /<([^>]+)>/.exec(first(message, 'contact'))?.[1] ?? '';
    const fromTag = /;tag=([^;\s]+)/.exec(first(message, 'from'))?.[1] ?? '';
    this.ack(target, fromTag, to, callId, 'a');
    if (!pending) return; // a 200 sent again: the ACK above answers it
    const port = /^m=audio (\d+) /m.exec(message.body)?.[1];
    const host = /^c=IN IP4 (\S+)/m.exec(message.body)?.[1] ?? this.gatewayHost;
    if (port === undefined || target === '') {
      this.settle(callId, { ok: false, reason: 'a 200 without an audio answer or Contact' });
      return;
    }
    const dialog: Dialog = {
      callId,
      fromTag,
      to,
      target,
      remoteRtpPort: Number(port),
      remoteRtpHost: host,
      answerMs: Math.round((performance.now() - pending.sentAt) * 10) / 10,
      answeredAt: performance.now(),
      endedByGateway: false,
      ...(/^m=audio \d+ UDP\/TLS/m.test(message.body) && { webrtc: webrtcAnswer(message.body) }),
    };
    this.dialogs.set(callId, dialog);
    this.settle(callId, { ok: true, dialog });
  }

  private ack(target: string, fromTag: string, to: string, callId: string, branch: string): void {
    const local = this.local;
    this.send(
      [
        `ACK ${target} SIP/2.0`,
        `Via: SIP/2.0/UDP ${local};branch=z9hG4bK-${fromTag}-${branch};rport`,
        'Max-Forwards: 70',
        `From: "streams bench" <sip:bench@${local}>;tag=${fromTag}`,
        `To: ${to}`,
        `Call-ID: ${callId}`,
        'CSeq: 1 ACK',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
  }

  /** A request from the gateway (its BYE when it ends a call): 200 OK, the dialog marked. */
  private answerRequest(message: Parsed, callId: string): void {
    if (message.method === 'ACK') return;
    if (message.method === 'BYE') {
      const dialog = this.dialogs.get(callId);
      if (dialog) dialog.endedByGateway = true;
    }
    const copied = message.lines.filter((line) =>
      /^(via|v|from|f|to|t|call-id|i|cseq)\s*:/i.test(line),
    );
    const via = parseViaTarget(first(message, 'via'));
    this.send(
      ['SIP/2.0 200 OK', ...copied, 'Content-Length: 0', '', ''].join('\r\n'),
      via?.port ?? this.gatewayPort,
      via?.host ?? this.gatewayHost,
    );
  }
}

function plainMedia(rtpPort: number): string[] {
  return [
    `m=audio ${rtpPort} RTP/AVP 0 101`,
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:101 telephone-event/8000',
    'a=fmtp:101 0-15',
  ];
}

/**
 * A browser's audio offer: Opus and telephone-event at its clock and at 8 kHz (as Chrome
 * offers them), ICE with one host candidate, DTLS actpass, rtcp-mux.
 */
function webrtcMedia(rtpPort: number, host: string, offer: WebrtcOffer): string[] {
  return [
    `m=audio ${rtpPort} UDP/TLS/RTP/SAVPF 111 110 126`,
    'a=rtpmap:111 opus/48000/2',
    'a=fmtp:111 minptime=10;useinbandfec=1',
    'a=rtpmap:110 telephone-event/48000',
    'a=rtpmap:126 telephone-event/8000',
    `a=ice-ufrag:${offer.ice.ufrag}`,
    `a=ice-pwd:${offer.ice.pwd}`,
    `a=fingerprint:${offer.fingerprint}`,
    'a=setup:actpass',
    'a=rtcp-mux',
    `a=candidate:1 1 udp 2122260223 ${host} ${rtpPort} typ host`,
  ];
}

function webrtcAnswer(body: string): WebrtcAnswer {
  const attribute = (name: string) =>
    new RegExp(`^a=${name}:(.+?)\\r?$`, 'm').exec(body)?.[1] ?? '';
  return {
    ice: { ufrag: attribute('ice-ufrag'), pwd: attribute('ice-pwd') },
    fingerprint: attribute('fingerprint'),
    setup: attribute('setup'),
  };
}

function reasonPhrase(data: Buffer): string {
  const line = data.toString('latin1', 0, Math.min(data.length, 200)).split('\r\n')[0] ?? '';
  return line.split(' ').slice(2).join(' ');
}

/** Where the top Via asks for its response (rport and received honoured when present). */
function parseViaTarget(via: string): { host: string; port: number } | null {
  const sentBy = /SIP\/2\.0\/UDP\s+([^;:\s]+)(?::(\d+))?/i.exec(via);
  if (!sentBy) return null;
  const rport = /;rport=(\d+)/.exec(via)?.[1];
  const received = /;received=([^;\s]+)/.exec(via)?.[1];
  return {
    host: received ?? sentBy[1]!,
    port: Number(rport ?? sentBy[2] ?? 5060),
  };
}
