import { createSocket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import {
  Inviter,
  Registerer,
  RegistererState,
  SessionState,
  UserAgent,
  type Invitation,
  type SessionDescriptionHandler,
  type UserAgentDelegate,
} from 'sip.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  attributeValue,
  bindingRequest,
  parseStunMessage,
  readErrorCode,
  STUN_ATTRIBUTE,
} from '../../../src/media/webrtc/stun/index.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { launchHeadlessBrowser, type HeadlessBrowser } from '../../support/headless-browser.js';
import { StreamServer, type StreamConnection } from '../../support/stream-server.js';
import { strongestFrequency, tone } from '../../support/signal.js';
import { until } from '../../support/wait.js';

/**
 * A browser calls the gateway: sip.js over WebSocket (in Node, with the endpoint's digest
 * credentials) carries the offer of headless Chromium's RTCPeerConnection, whose fake
 * microphone plays 700 Hz, in its INVITE; the endpoint's application forks the call to a
 * bidirectional 16 kHz stream. The stream server hears 700 Hz decoded from SRTP and Opus and
 * plays 500 Hz back, which the page hears. Then the gateway calls the same browser, registered
 * over WebSocket, with a WebRTC offer of its own (a=setup:actpass: Chromium is then the DTLS
 * client). ICE, DTLS and SRTP are Chromium's and the gateway's.
 */
const PAGE_SCRIPT = `
window.call = { states: [] };
window.newConnection = async () => {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const pc = new RTCPeerConnection({ iceServers: [] });
  for (const track of stream.getTracks()) pc.addTrack(track, stream);
  pc.onconnectionstatechange = () => window.call.states.push(pc.connectionState);
  pc.ontrack = (event) => {
    const audio = document.createElement('audio');
    audio.autoplay = true;
    audio.srcObject = event.streams[0] || new MediaStream([event.track]);
    document.body.appendChild(audio);
    const context = new AudioContext();
    const analyser = context.createAnalyser();
    analyser.fftSize = 8192;
    context.createMediaStreamSource(audio.srcObject).connect(analyser);
    window.call.analyser = { analyser, rate: context.sampleRate };
  };
  window.call.pc = pc;
  return pc;
};
window.gathered = async (pc) => {
  await new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') resolve();
    });
  });
  return pc.localDescription.sdp;
};
window.makeOffer = async () => {
  const pc = await window.newConnection();
  await pc.setLocalDescription(await pc.createOffer());
  return window.gathered(pc);
};
window.answerOffer = async (sdp) => {
  const pc = await window.newConnection();
  await pc.setRemoteDescription({ type: 'offer', sdp });
  await pc.setLocalDescription(await pc.createAnswer());
  return window.gathered(pc);
};
window.takeAnswer = (sdp) => window.call.pc.setRemoteDescription({ type: 'answer', sdp });
window.peakHz = () => {
  const { analyser, rate } = window.call.analyser;
  const bins = new Float32Array(analyser.frequencyBinCount);
  analyser.getFloatFrequencyData(bins);
  let best = 0;
  for (let i = 1; i < bins.length; i++) if (bins[i] > bins[best]) best = i;
  return (best * rate) / analyser.fftSize;
};
window.inboundRtp = async () => {
  for (const report of (await window.call.pc.getStats()).values())
    if (report.type === 'inbound-rtp') return report;
  return null;
};
`;

/**
 * sip.js's descriptions are the page's: its offer out and the gateway's answer in, or the
 * gateway's offer in and its answer out.
 */
class PageDescriptions implements SessionDescriptionHandler {
  /** The gateway's offer, while it waits for the page's answer. */
  private offer: string | null = null;

  constructor(private readonly page: Page) {}

  close(): void {}

  async getDescription() {
    const offer = this.offer;
    this.offer = null;
    const sdp = (await this.page.evaluate(
      offer === null ? 'window.makeOffer()' : `window.answerOffer(${JSON.stringify(offer)})`,
    )) as string;
    return { body: sdp, contentType: 'application/sdp' };
  }

  hasDescription(contentType: string): boolean {
    return contentType === 'application/sdp';
  }

  async setDescription(sdp: string): Promise<void> {
    if (/^a=setup:actpass/m.test(sdp)) this.offer = sdp;
    else await this.page.evaluate(`window.takeAnswer(${JSON.stringify(sdp)})`);
  }

  sendDtmf(): boolean {
    return false;
  }
}

function wav(samples: Int16Array, rate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.byteLength, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.byteLength, 40);
  return Buffer.concat([header, Buffer.from(samples.buffer)]);
}

/**
 * The stream hears the browser's 700 Hz (decoded from SRTP and Opus) and plays 500 Hz, which
 * the page hears (WebAudio's peak) with the inbound-rtp stats to show for it.
 */
async function exchangeAudio(page: Page, ws: StreamConnection): Promise<void> {
  await until(() => ws.of('start').length === 1, 10_000);
  ws.playL16(tone(16000, 500, 3, 8000), 16000);
  await until(() => ws.payloads('inbound').length >= 150, 15_000);
  const heardHz = (await page.evaluate('window.peakHz()')) as number;
  const inboundRtp = (await page.evaluate('window.inboundRtp()')) as {
    packetsReceived: number;
    audioLevel: number;
    totalAudioEnergy: number;
  };

  const heard = Buffer.concat(ws.payloads('inbound'));
  const inbound = new Int16Array(heard.length >> 1);
  for (let i = 0; i < inbound.length; i++) inbound[i] = heard.readInt16LE(i * 2);
  const loud = inbound.findIndex((s) => Math.abs(s) > 1000);
  expect(loud).toBeGreaterThanOrEqual(0);
  expect(strongestFrequency(inbound.subarray(loud + 1600, loud + 17600), 16000, 10)).toBe(700);
  expect(ws.violations).toEqual([]);
  expect(Math.abs(heardHz - 500)).toBeLessThan(15);
  expect(inboundRtp.packetsReceived).toBeGreaterThan(100);
  expect(inboundRtp.totalAudioEnergy).toBeGreaterThan(0);
}

const REJECTED_LINE = 'voxgate_ice_rejected_total{reason="bad-integrity"} 1';

const metrics = async () => (await gw.gateway.app.inject({ method: 'GET', url: '/metrics' })).body;

let gw: TestGateway;
let app: ClientApp;
let bot: StreamServer;
let chromium: HeadlessBrowser;
let pageServer: Server;
let directory: string;
let endpoint: { username: string; password: string };
const saved = Object.getOwnPropertyDescriptor(globalThis, 'WebSocket');

beforeAll(async () => {
  Object.defineProperty(globalThis, 'WebSocket', { value: WebSocket, configurable: true });
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
  bot = await StreamServer.start();
  directory = await mkdtemp(join(tmpdir(), 'voxgate-webrtc-call-'));
  const microphone = join(directory, 'tone-700.wav');
  await writeFile(microphone, wav(tone(48000, 700, 4, 8000), 48000));
  pageServer = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end('<!doctype html><title>voxgate WebRTC call</title><body></body>');
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  chromium = await launchHeadlessBrowser({
    args: [
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-audio-capture=${microphone}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
    json: {
      app_name: 'browsers',
      answer_url: `${app.baseUrl}/answer`,
      hangup_url: `${app.baseUrl}/hangup`,
    },
  });
  const password = 'browser-Secret1';
  const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Endpoint/`, {
    json: { username: 'browser', password, alias: 'browser', app_id: application.body.app_id },
  });
  expect(res.status).toBe(201);
  endpoint = { username: res.body.username, password };
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await new Promise((resolve) => pageServer?.close(resolve));
  await gw?.close();
  await app?.close();
  await bot?.close();
  await rm(directory, { recursive: true, force: true });
  if (saved) Object.defineProperty(globalThis, 'WebSocket', saved);
  else Reflect.deleteProperty(globalThis, 'WebSocket');
});

/** sip.js over the gateway's WebSocket listener as the endpoint, its media from `handler`. */
function endpointAgent(
  handler: () => SessionDescriptionHandler,
  delegate?: UserAgentDelegate,
): UserAgent {
  return new UserAgent({
    uri: UserAgent.makeURI(`sip:${endpoint.username}@127.0.0.1`),
    transportOptions: { server: `ws://127.0.0.1:${gw.gateway.sip.addresses.ws.port}` },
    authorizationUsername: endpoint.username,
    authorizationPassword: endpoint.password,
    logBuiltinEnabled: false,
    sessionDescriptionHandlerFactory: handler,
    ...(delegate && { delegate }),
  });
}

describe('a browser calling over WebSocket SIP with WebRTC media', () => {
  it('is heard by a stream and hears it: Opus over DTLS-SRTP, ICE-lite, both ways', async () => {
    app.serve('/answer', {
      body:
        '<Response>' +
        `<Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-l16;rate=16000">${bot.url}</Stream>` +
        '</Response>',
    });
    const page = await chromium.browser.newPage();
    await page.goto(`http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`);
    await page.evaluate(PAGE_SCRIPT);
    const ua = endpointAgent(() => new PageDescriptions(page));
    try {
      await ua.start();
      const inviter = new Inviter(ua, UserAgent.makeURI('sip:14155550123@127.0.0.1')!);
      const states: SessionState[] = [];
      inviter.stateChange.addListener((state) => states.push(state));
      await inviter.invite();
      await until(() => states.includes(SessionState.Established), 15_000, 20);
      await until(
        async () => ((await page.evaluate('window.call.states')) as string[]).includes('connected'),
        15_000,
        50,
      );

      await exchangeAudio(page, await bot.connection(0));

      // A check with the right names but signed with another password than the leg's, from
      // elsewhere: answered 401 and counted on /metrics, the call going on.
      const answer = (await page.evaluate('window.call.pc.remoteDescription.sdp')) as string;
      const port = Number(/^m=audio (\d+) /m.exec(answer)![1]);
      const ufrag = /^a=ice-ufrag:(\S+)/m.exec(answer)![1]!;
      const offer = (await page.evaluate('window.call.pc.localDescription.sdp')) as string;
      const browserUfrag = /^a=ice-ufrag:(\S+)/m.exec(offer)![1]!;
      const stranger = createSocket('udp4');
      const response = new Promise<Buffer>((resolve) => stranger.once('message', resolve));
      stranger.send(
        bindingRequest({
          username: `${ufrag}:${browserUfrag}`,
          key: Buffer.from('not-the-password-of-this-leg'),
          priority: 1,
          useCandidate: true,
          role: 'controlling',
          tieBreaker: 7n,
        }),
        port,
        '127.0.0.1',
      );
      const refusal = parseStunMessage(await response);
      expect(refusal.messageClass).toBe('error');
      expect(readErrorCode(attributeValue(refusal, STUN_ATTRIBUTE.ERROR_CODE)!)?.code).toBe(401);
      stranger.close();
      await until(async () => (await metrics()).includes(REJECTED_LINE), 5000, 100);
      expect(app.requestsTo('/hangup')).toHaveLength(0);

      await inviter.bye();
      await until(() => app.requestsTo('/hangup').length > 0, 10_000);
      expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
        CallStatus: 'completed',
        HangupCauseCode: '4000',
        HangupSource: 'Caller',
      });
    } finally {
      await ua.stop().catch(() => undefined);
      await page.close();
    }
  }, 60_000);

  it('calls a browser registered over WebSocket with a WebRTC offer, and carries audio both ways', async () => {
    app.serve('/answer-out', {
      body:
        '<Response>' +
        `<Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-l16;rate=16000">${bot.url}</Stream>` +
        '</Response>',
    });
    const page = await chromium.browser.newPage();
    await page.goto(`http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`);
    await page.evaluate(PAGE_SCRIPT);
    const invitations: Invitation[] = [];
    const ua = endpointAgent(() => new PageDescriptions(page), {
      onInvite: (invitation) => {
        invitations.push(invitation);
        void invitation.accept().catch(() => undefined);
      },
    });
    const registerer = new Registerer(ua);
    try {
      await ua.start();
      const registered: RegistererState[] = [];
      registerer.stateChange.addListener((state) => registered.push(state));
      await registerer.register();
      await until(() => registered.includes(RegistererState.Registered), 10_000, 20);
      const index = bot.connections.length;
      const placed = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
        json: {
          from: '+14155550100',
          to: `sip:${endpoint.username}@127.0.0.1`,
          answer_url: `${app.baseUrl}/answer-out`,
          hangup_url: `${app.baseUrl}/hangup-out`,
        },
      });
      expect(placed.status).toBe(201);
      await until(() => invitations.length === 1, 10_000, 20);
      const offer = invitations[0]!.request.body;
      expect(offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 /m);
      expect(offer).toMatch(/^a=ice-lite/m);
      expect(offer).toMatch(/^a=setup:actpass/m);
      await until(
        async () => ((await page.evaluate('window.call.states')) as string[]).includes('connected'),
        15_000,
        50,
      );
      await exchangeAudio(page, await bot.connection(index));

      await invitations[0]!.bye();
      await until(() => app.requestsTo('/hangup-out').length > 0, 10_000);
      expect(app.requestsTo('/hangup-out')[0]!.params).toMatchObject({
        CallStatus: 'completed',
        HangupCauseCode: '4000',
        HangupSource: 'Callee',
      });
    } finally {
      await registerer.unregister().catch(() => undefined);
      await ua.stop().catch(() => undefined);
      await page.close();
    }
  }, 60_000);

  it('refuses 488 a WebRTC offer without a fingerprint, naming it, and no call starts', async () => {
    app.reset();
    const offer = [
      'v=0',
      'o=- 1 1 IN IP4 127.0.0.1',
      's=-',
      't=0 0',
      'a=group:BUNDLE 0',
      'm=audio 9 UDP/TLS/RTP/SAVPF 111',
      'c=IN IP4 127.0.0.1',
      'a=mid:0',
      'a=ice-ufrag:abcd',
      'a=ice-pwd:abcdefghijklmnopqrstuvwx',
      'a=setup:actpass',
      'a=rtcp-mux',
      'a=rtpmap:111 opus/48000/2',
      '',
    ].join('\r\n');
    const fixed: SessionDescriptionHandler = {
      close: () => undefined,
      getDescription: async () => ({ body: offer, contentType: 'application/sdp' }),
      hasDescription: (type) => type === 'application/sdp',
      setDescription: async () => undefined,
      sendDtmf: () => false,
    };
    const ua = endpointAgent(() => fixed);
    try {
      await ua.start();
      const inviter = new Inviter(ua, UserAgent.makeURI('sip:14155550123@127.0.0.1')!);
      const refusal = new Promise<{ status: number; reason: string; warning?: string }>(
        (resolve) =>
          void inviter.invite({
            requestDelegate: {
              onReject: (response) =>
                resolve({
                  status: response.message.statusCode!,
                  reason: response.message.reasonPhrase!,
                  warning: response.message.getHeader('Warning'),
                }),
            },
          }),
      );
      const answer = await refusal;
      expect(answer.status).toBe(488);
      expect(`${answer.reason} ${answer.warning ?? ''}`).toContain('no a=fingerprint');
      expect(app.requestsTo('/answer')).toHaveLength(0);
      // The refused call still has its record and hangup callback: wait for it here, or it
      // lands on the next test's /hangup after that test's reset.
      await until(() => app.requestsTo('/hangup').length > 0, 10_000);
      expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
        CallStatus: 'failed',
        HangupCauseCode: '5000',
        HangupSource: 'Error',
      });
    } finally {
      await ua.stop().catch(() => undefined);
    }
  }, 30_000);

  it('ends the call 4000 from the caller when the browser closes its connection without a BYE', async () => {
    app.reset();
    app.serve('/answer', { body: '<Response><Wait length="30"/></Response>' });
    const page = await chromium.browser.newPage();
    await page.goto(`http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`);
    await page.evaluate(PAGE_SCRIPT);
    const ua = endpointAgent(() => new PageDescriptions(page));
    try {
      await ua.start();
      const inviter = new Inviter(ua, UserAgent.makeURI('sip:14155550123@127.0.0.1')!);
      const states: SessionState[] = [];
      inviter.stateChange.addListener((state) => states.push(state));
      await inviter.invite();
      await until(
        async () => ((await page.evaluate('window.call.states')) as string[]).includes('connected'),
        15_000,
        50,
      );
      // The gateway's SRTP reaches the page only once its own end of DTLS is up: a close_notify
      // that came before would fail a handshake, not close a call (seen on a busy machine).
      const received = () =>
        page.evaluate(
          `window.call.pc.getStats().then((stats) => { let n = 0; stats.forEach((r) => { if (r.type === 'inbound-rtp') n += r.packetsReceived; }); return n; })`,
        ) as Promise<number>;
      await until(async () => (await received()) > 0, 10_000, 50);
      // RTCPeerConnection.close() sends DTLS close_notify; the SIP side says nothing.
      await page.evaluate('window.call.pc.close()');
      // This call's own hangup, not a late one of an earlier call.
      const callUuid = app.requestsTo('/answer')[0]!.params.CallUUID;
      const hangup = () => app.requestsTo('/hangup').find((r) => r.params.CallUUID === callUuid);
      await until(() => hangup() !== undefined, 10_000);
      expect(hangup()!.params).toMatchObject({
        CallStatus: 'completed',
        HangupCauseCode: '4000',
        HangupSource: 'Caller',
      });
      const ended = gw.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(ended.filter((entry) => entry.msg === 'WebRTC media ended')).toEqual([
        expect.objectContaining({ reason: expect.stringMatching(/^the peer closed DTLS/) }),
      ]);
      // The gateway's BYE ends the SIP side too.
      await until(() => states.includes(SessionState.Terminated), 5000, 20);
    } finally {
      await ua.stop().catch(() => undefined);
      await page.close();
    }
  }, 60_000);
});
