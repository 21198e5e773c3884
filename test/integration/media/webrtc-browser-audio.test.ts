import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaUpdateFrom } from '../../../src/call/media-binding.js';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import { generateDtlsCertificate } from '../../../src/media/dtls/dtls-certificate.js';
import type { AudioFormat } from '../../../src/media/pipeline/audio-format.js';
import { MediaWorkerPool } from '../../../src/media/worker/media-worker-pool.js';
import { createIceCredentials } from '../../../src/media/webrtc/ice/index.js';
import { SdpSession } from '../../../src/sip/sdp/index.js';
import { launchHeadlessBrowser, type HeadlessBrowser } from '../../support/headless-browser.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { chunks, concat, strongestFrequency, tone } from '../../support/signal.js';
import { until } from '../../support/wait.js';

/**
 * A real browser on a WebRTC leg of a worker: headless Chromium whose fake microphone plays a
 * 700 Hz tone from a WAV file makes an offer; voxgate answers it as a call leg does (an
 * SdpSession with its ICE credentials and the worker's certificate fingerprint, the answer's
 * audio applied to the session), and the leg is bridged to a plain PCMU phone. Chromium's
 * ICE checks, DTLS handshake and SRTP are its own.
 */
const PCMU: AudioFormat = { encoding: 'PCMU', payloadType: 0, rate: 8000 };
const certificate = generateDtlsCertificate();

const PAGE_SCRIPT = `
window.call = { states: [] };
window.makeOffer = async () => {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const pc = new RTCPeerConnection();
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
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') resolve();
    });
  });
  return pc.localDescription.sdp;
};
/** The frequency with the most power in what the browser hears now (WebAudio). */
window.peakHz = () => {
  const { analyser, rate } = window.call.analyser;
  const bins = new Float32Array(analyser.frequencyBinCount);
  analyser.getFloatFrequencyData(bins);
  let best = 0;
  for (let i = 1; i < bins.length; i++) if (bins[i] > bins[best]) best = i;
  return (best * rate) / analyser.fftSize;
};
window.takeAnswer = (sdp) => window.call.pc.setRemoteDescription({ type: 'answer', sdp });
window.rtpStats = async () => {
  const out = {};
  for (const report of (await window.call.pc.getStats()).values()) {
    if (report.type === 'inbound-rtp' || report.type === 'outbound-rtp') out[report.type] = report;
  }
  return out;
};
`;

/** A mono 16-bit WAV at 48 kHz: what the fake microphone plays, looped. */
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
  return Buffer.concat([
    header,
    Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength),
  ]);
}

let chromium: HeadlessBrowser;
let server: Server;
let base: string;
let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'voxgate-webrtc-audio-'));
  const microphone = join(directory, 'tone-700.wav');
  await writeFile(microphone, wav(tone(48000, 700, 4, 8000), 48000));
  server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end('<!doctype html><title>voxgate WebRTC audio test</title><body></body>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  chromium = await launchHeadlessBrowser({
    args: [
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-audio-capture=${microphone}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await new Promise((resolve) => server?.close(resolve));
  await rm(directory, { recursive: true, force: true });
});

interface RtpStats {
  'inbound-rtp'?: {
    packetsReceived: number;
    packetsLost: number;
    totalAudioEnergy?: number;
    audioLevel?: number;
  };
  'outbound-rtp'?: { packetsSent: number };
}

describe('a WebRTC leg with headless Chromium', () => {
  it("hears the browser's microphone and is heard by it, over ICE, DTLS-SRTP and Opus", async () => {
    const base0 = 20000 + 2 * Math.floor(Math.random() * 10000);
    const pool = new MediaWorkerPool(
      { onEvent: () => undefined },
      {
        size: 1,
        settings: {
          rtpPorts: { min: base0, max: base0 + 9 },
          rtpHost: '127.0.0.1',
          cname: 'webrtc-browser-audio',
          dtls: { certificate, handshakeTimeoutMs: 10_000 },
        },
      },
    );
    const phone = await RtpPeer.open();
    const page = await chromium.browser.newPage();
    try {
      await page.goto(base);
      await page.evaluate(PAGE_SCRIPT);
      const offer = (await page.evaluate('window.makeOffer()')) as string;

      // As an inbound call leg does: the session opens first, its port goes in the answer.
      const ice = createIceCredentials();
      const opened = await pool.createSession('w', {
        formats: [PCMU],
        webrtc: { localIce: ice },
      });
      const sdp = new SdpSession({
        address: '127.0.0.1',
        port: opened.port,
        webrtc: { ice, fingerprint: certificate.fingerprint },
      });
      const answer = sdp.answer(offer);
      if (!answer.ok) throw new Error(answer.reason);
      expect(answer.audio.codec.encoding).toBe('opus');
      await pool.send({
        type: 'updateSession',
        sessionId: 'w',
        changes: mediaUpdateFrom(answer.audio),
      });
      const b = await pool.createSession(
        'b',
        { formats: [PCMU], remote: phone.address },
        { near: 'w' },
      );
      await pool.send({ type: 'bridge', sessionId: 'w', peerId: 'b' });
      await page.evaluate(`window.takeAnswer(${JSON.stringify(answer.sdp)})`);

      await until(
        async () => ((await page.evaluate('window.call.states')) as string[]).includes('connected'),
        15_000,
        50,
      );
      const phoneTalks = phone.stream(
        b.port,
        [...chunks(tone(8000, 500, 3, 8000), [160])].map(muLawEncode),
        { payloadType: 0 },
      );
      await until(() => phone.received.length >= 100, 10_000, 20);
      // Half-way through the phone's tone, the browser hears it (bins of about 6 Hz).
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const heardHz = (await page.evaluate('window.peakHz()')) as number;
      expect(Math.abs(heardHz - 500)).toBeLessThan(15);
      await phoneTalks;

      const atPhone = concat(
        phone.received.filter((p) => p.payloadType === 0).map((p) => muLawDecode(p.payload)),
      );
      const loud = atPhone.subarray(atPhone.findIndex((s) => Math.abs(s) > 1000) + 800);
      expect(loud.length).toBeGreaterThan(4000);
      expect(strongestFrequency(loud.subarray(0, 4000), 8000, 10)).toBe(700);

      const stats = (await page.evaluate('window.rtpStats()')) as RtpStats;
      expect(stats['outbound-rtp']!.packetsSent).toBeGreaterThan(100);
      expect(stats['inbound-rtp']!.packetsReceived).toBeGreaterThan(100);
      expect(stats['inbound-rtp']!.totalAudioEnergy).toBeGreaterThan(0);
      // The phone's tone peaks at 8000 of 32767: about 0.24 of full scale.
      expect(stats['inbound-rtp']!.audioLevel).toBeGreaterThan(0.1);
      expect(stats['inbound-rtp']!.packetsLost).toBe(0);

      const session = await pool.send({ type: 'sessionStats', sessionId: 'w' });
      expect(session.webrtc).toMatchObject({
        ice: 'connected',
        dtls: 'connected',
        srtpDropped: { auth: 0, replay: 0, malformed: 0 },
      });
      expect(session.inbound).toMatchObject({ undecodable: 0 });
    } finally {
      await page.close();
      await phone.close();
      await pool.close();
    }
  }, 60_000);
});
