import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemScheduler } from '../../../src/core/scheduler.js';
import {
  createIceCredentials,
  IceLiteAgent,
  type ConsentLoss,
  type IceCredentials,
} from '../../../src/media/webrtc/ice/index.js';
import {
  attributeValue,
  hasValidIntegrity,
  isStunDatagram,
  parseStunMessage,
  STUN_ATTRIBUTE,
  type TransportAddress,
} from '../../../src/media/webrtc/stun/index.js';
import { parseSessionDescription, SdpSession } from '../../../src/sip/sdp/index.js';
import { launchHeadlessBrowser, type HeadlessBrowser } from '../../support/headless-browser.js';
import { until } from '../../support/wait.js';

/**
 * ICE-lite against a real browser: headless Chromium with a fake microphone makes an offer (or
 * answers ours), our SDP goes back with a host candidate on a UDP socket this test runs, and
 * the responder there answers Chromium's checks until Chromium calls ICE connected. The DTLS
 * fingerprint is a dummy: DTLS cannot complete, but ICE connects before DTLS starts.
 */

/** The page's side: one RTCPeerConnection at a time, driven by name from the test. */
const PAGE_SCRIPT = `
window.ice = { states: [] };
window.newConnection = async () => {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const pc = new RTCPeerConnection();
  for (const track of stream.getTracks()) pc.addTrack(track, stream);
  pc.oniceconnectionstatechange = () => window.ice.states.push(pc.iceConnectionState);
  window.ice = { pc, states: [] };
  return pc;
};
window.gathered = (pc) => new Promise((resolve) => {
  if (pc.iceGatheringState === 'complete') return resolve(pc.localDescription.sdp);
  pc.addEventListener('icegatheringstatechange', () => {
    if (pc.iceGatheringState === 'complete') resolve(pc.localDescription.sdp);
  });
});
window.makeOffer = async () => {
  const pc = await window.newConnection();
  await pc.setLocalDescription(await pc.createOffer());
  return window.gathered(pc);
};
window.takeAnswer = (sdp) => window.ice.pc.setRemoteDescription({ type: 'answer', sdp });
window.answerOffer = async (sdp) => {
  const pc = await window.newConnection();
  await pc.setRemoteDescription({ type: 'offer', sdp });
  await pc.setLocalDescription(await pc.createAnswer());
  return window.gathered(pc);
};
window.selectedRemote = async () => {
  const stats = await window.ice.pc.getStats();
  for (const report of stats.values()) {
    if (report.type !== 'transport' || !report.selectedCandidatePairId) continue;
    const pair = stats.get(report.selectedCandidatePairId);
    const remote = stats.get(pair.remoteCandidateId);
    return { address: remote.address, port: remote.port };
  }
  return null;
};
`;

const DUMMY_FINGERPRINT = {
  algorithm: 'sha-256',
  value: Array.from({ length: 32 }, (_, i) =>
    (i * 7).toString(16).padStart(2, '0').toUpperCase(),
  ).join(':'),
};

interface Check {
  from: TransportAddress;
  useCandidate: boolean;
  integrityValid: boolean;
  username: string;
}

/** A UDP socket with the ICE-lite responder on it, answering while `answering` holds. */
class Responder {
  answering = true;
  readonly checks: Check[] = [];
  readonly losses: ConsentLoss[] = [];
  readonly selected: TransportAddress[] = [];
  readonly otherDatagrams: number[] = [];
  agent: IceLiteAgent | null = null;

  private constructor(
    readonly socket: Socket,
    readonly port: number,
    readonly credentials: IceCredentials,
  ) {
    socket.on('message', (datagram, rinfo) => this.receive(datagram, rinfo));
  }

  static async open(): Promise<Responder> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new Responder(socket, socket.address().port, createIceCredentials());
  }

  start(remoteUfrag: string | null, consentTimeoutMs: number): void {
    this.agent = new IceLiteAgent({
      local: this.credentials,
      remoteUfrag,
      scheduler: systemScheduler,
      consentTimeoutMs,
      delegate: {
        onSelected: (remote) => this.selected.push(remote),
        onConsentLost: (loss) => this.losses.push(loss),
      },
    });
  }

  close(): void {
    this.agent?.close();
    this.socket.close();
  }

  private receive(datagram: Buffer, rinfo: { address: string; port: number }): void {
    if (!isStunDatagram(datagram)) {
      this.otherDatagrams.push(datagram[0] ?? -1);
      return;
    }
    if (!this.answering || this.agent === null) return;
    const from = { address: rinfo.address, port: rinfo.port };
    const message = parseStunMessage(datagram);
    if (message.messageClass === 'request') {
      this.checks.push({
        from,
        useCandidate: attributeValue(message, STUN_ATTRIBUTE.USE_CANDIDATE) !== null,
        integrityValid: hasValidIntegrity(message, Buffer.from(this.credentials.pwd)),
        username: attributeValue(message, STUN_ATTRIBUTE.USERNAME)?.toString() ?? '',
      });
    }
    const response = this.agent.receive(datagram, from);
    if (response !== null) this.socket.send(response, rinfo.port, rinfo.address);
  }
}

let chromium: HeadlessBrowser;
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end('<!doctype html><title>voxgate ICE test</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  chromium = await launchHeadlessBrowser({
    args: ['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'],
  });
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await new Promise((resolve) => server?.close(resolve));
});

async function openPage(): Promise<Page> {
  const page = await chromium.browser.newPage();
  await page.goto(base);
  await page.evaluate(PAGE_SCRIPT);
  return page;
}

const iceStates = (page: Page) => page.evaluate('window.ice.states') as Promise<string[]>;

/** Waits for Chromium to call ICE connected, then for consent to be lost once we go silent. */
async function connectThenFallSilent(page: Page, responder: Responder): Promise<void> {
  await until(async () => (await iceStates(page)).includes('connected'), 15_000, 50);
  // Chromium calls ICE connected once a check is answered, and nominates with the next one.
  await until(() => responder.selected.length > 0, 10_000, 20);
  const nominations = responder.checks.filter((check) => check.useCandidate);
  expect(nominations.length).toBeGreaterThan(0);
  expect(nominations.every((check) => check.integrityValid)).toBe(true);
  expect(
    responder.checks.every((check) => check.username.startsWith(`${responder.credentials.ufrag}:`)),
  ).toBe(true);
  expect(responder.agent?.state).toBe('connected');
  expect(responder.selected.at(-1)).toEqual(nominations.at(-1)?.from);
  expect(await page.evaluate('window.selectedRemote()')).toEqual({
    address: '127.0.0.1',
    port: responder.port,
  });
  expect(responder.agent?.rejected.size).toBe(0);
  responder.answering = false;
  await until(() => responder.losses.length > 0, 10_000, 50);
  expect(responder.losses).toHaveLength(1);
  expect(responder.losses[0]?.wasConnected).toBe(true);
  expect(responder.losses[0]?.silentMs).toBeGreaterThanOrEqual(2_000);
  expect(responder.agent?.state).toBe('consent-lost');
  // Chromium sees its own checks go unanswered (RFC 7675 on its side).
  await until(async () => (await iceStates(page)).includes('disconnected'), 15_000, 50);
}

describe('ICE-lite with headless Chromium', () => {
  it('connects a browser offer to our answer, then loses consent when we stop answering', async () => {
    const responder = await Responder.open();
    const page = await openPage();
    try {
      const offerText = (await page.evaluate('window.makeOffer()')) as string;
      const offer = parseSessionDescription(offerText);
      const audio = offer.streams[0]!;
      expect(offer.streams).toHaveLength(1);
      expect(offer.bundle).toEqual([audio.transport?.mid]);
      expect(audio.protocol).toBe('UDP/TLS/RTP/SAVPF');
      expect(audio.transport).toMatchObject({ rtcpMux: true, setup: 'actpass' });
      expect(audio.transport?.fingerprints[0]?.algorithm).toBe('sha-256');
      expect(audio.transport?.candidates.length).toBeGreaterThan(0);
      expect(audio.payloads.map((p) => `${p.encoding}/${p.clockRate}`)).toContain('opus/48000');

      const session = new SdpSession({
        address: '127.0.0.1',
        port: responder.port,
        webrtc: { ice: responder.credentials, fingerprint: DUMMY_FINGERPRINT },
      });
      const answer = session.answer(offerText);
      if (!answer.ok) throw new Error(answer.reason);
      expect(answer.audio.codec.encoding).toBe('opus');
      responder.start(answer.audio.transport!.remoteIce.ufrag, 2_000);
      await page.evaluate(`window.takeAnswer(${JSON.stringify(answer.sdp)})`);
      await connectThenFallSilent(page, responder);
      // We answered setup:active, so Chromium is the DTLS server and waits for our hello.
      expect(responder.otherDatagrams).toEqual([]);
    } finally {
      await page.close();
      responder.close();
    }
  });

  it('connects our offer to a browser answer (an outbound call to a WebRTC endpoint)', async () => {
    const responder = await Responder.open();
    const page = await openPage();
    try {
      const session = new SdpSession({
        address: '127.0.0.1',
        port: responder.port,
        webrtc: { ice: responder.credentials, fingerprint: DUMMY_FINGERPRINT },
      });
      const offer = session.createOffer();
      // The browser checks as soon as it has answered, maybe before its answer reaches us
      // (in a 200 OK): until then any peer ufrag is taken.
      responder.start(null, 2_000);
      const answerText = (await page.evaluate(
        `window.answerOffer(${JSON.stringify(offer)})`,
      )) as string;
      const reading = session.readAnswer(answerText);
      if (!reading.ok) throw new Error(reading.reason);
      expect(reading.audio.codec.encoding).toBe('opus');
      // Chromium answers actpass with active: voxgate is then the DTLS server.
      expect(reading.audio.transport?.dtlsRole).toBe('server');
      responder.agent!.setRemoteUfrag(reading.audio.transport!.remoteIce.ufrag);
      await connectThenFallSilent(page, responder);
      // As the DTLS client, Chromium sent its ClientHello (RFC 7983: a first byte of 20-63)
      // to the same port once ICE connected: the port the DTLS side will share.
      expect(responder.otherDatagrams).toContain(22);
    } finally {
      await page.close();
      responder.close();
    }
  });
});
