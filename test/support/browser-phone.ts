import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Page } from 'puppeteer-core';
import { expect } from 'vitest';
import {
  launchHeadlessBrowser,
  launchHeadlessFirefox,
  type HeadlessBrowser,
} from './headless-browser.js';
import { monoWav } from '../../examples/lib/wav.js';
import type { ClientApp } from './client-app.js';
import type { TestGateway } from './gateway.js';
import { powerAt, strongestFrequency } from './signal.js';

/**
 * sip.js 0.21 (or JsSIP 3) in headless Chromium (or Firefox), a real WebRTC softphone: the
 * page script (browser-phone-page.mjs, jssip-phone-page.mjs) is bundled with its SIP stack by
 * esbuild and served from 127.0.0.1 on a free port; Chromium's fake microphone plays a sine
 * tone of `toneHz` from a WAV this harness writes. Every method runs in the page through
 * page.evaluate.
 */
export interface BrowserPhoneOptions {
  /** The tone the fake microphone plays (Hz). Default 1000. */
  toneHz?: number;
  /** Trusts any certificate, so a wss:// server may use a self-signed one. */
  acceptInsecureCertificates?: boolean;
  /**
   * The browser: Chromium (the default) or Firefox. Firefox's fake microphone plays its own
   * 1 kHz tone, whatever `toneHz` says.
   */
  browser?: 'chromium' | 'firefox';
  /**
   * The SIP stack of the page: sip.js 0.21 (the default) or JsSIP 3, which has no reconnect
   * or ICE restart here and sends DTMF as SIP INFO unless asked for RFC 4733.
   */
  stack?: 'sip.js' | 'jssip';
}

/** The final response to a REGISTER or INVITE, as the page saw it. */
export interface FinalResponse {
  status: number;
  reason: string;
}

export interface CallOutcome extends FinalResponse {
  /** A 2xx arrived: the session is (being) established. */
  answered: boolean;
  /** The SDP offer the browser sent in its INVITE. */
  offer: string | null;
  /** The gateway's SDP answer, when it answered. */
  answer: string | null;
}

export interface RemoteAudio {
  /**
   * The frequency with the most energy over the window (Hz, to one FFT bin: ~5.9 Hz at 48 kHz;
   * to 10 Hz from a recording).
   */
  dominantHz: number;
  /** Mean RMS level over the window in dBFS; -Infinity for digital silence. */
  levelDbfs: number;
  sampleRate: number;
  /**
   * For each frequency `listen` was asked to probe: its energy in dB under the strongest
   * frequency's (0 for the strongest itself; a tone that is there is within some dB of 0, one
   * that is not is tens of dB under).
   */
  probes: Record<number, number>;
}

export interface BrowserPhone {
  page: Page;
  /** Errors the page logged (console.error) or threw (uncaught), in order. */
  consoleErrors: string[];
  /**
   * Starts a UserAgent on `wsUrl` (ws:// or wss://) and REGISTERs `aor` with
   * `Authorization: Bearer <token>` (RFC 8898). Resolves with the 2xx; rejects with the status
   * of a refusal.
   */
  register(wsUrl: string, aor: string, token: string): Promise<FinalResponse>;
  /**
   * JsSIP only: REGISTERs `aor` as an endpoint, answering digest challenges with `user` and
   * `password`. Resolves with the 2xx; rejects with the status of a refusal.
   */
  registerDigest(
    wsUrl: string,
    aor: string,
    user: string,
    password: string,
  ): Promise<FinalResponse>;
  /**
   * Drops its WebSocket connection without a word (a network change), connects again and
   * registers again; the call in progress goes on. Resolves with the REGISTER's 2xx.
   */
  reconnect(): Promise<FinalResponse>;
  /** Registers again (a refresh; JsSIP unregisters first): its binding becomes the newest. */
  registerAgain(): Promise<FinalResponse>;
  /** INVITEs `target` with the bearer token (the registration's unless given): its final response. */
  call(target: string, token?: string): Promise<CallOutcome>;
  /** Waits up to `timeoutMs` for an incoming INVITE, leaving it ringing: its offer. */
  ringing(timeoutMs?: number): Promise<{ offer: string | null }>;
  /** The SessionState of the oldest incoming INVITE not answered (Terminated once cancelled). */
  ringingState(): Promise<string | null>;
  /** Accepts the oldest incoming INVITE, waiting up to `timeoutMs` for one. */
  answer(timeoutMs?: number): Promise<{ from: string; offer: string | null }>;
  /** BYE when established, CANCEL while ringing out, 486-style reject while ringing in. */
  hangUp(): Promise<void>;
  /** Re-INVITEs the established call with an ICE restart: the final response, offer and answer. */
  restartIce(): Promise<FinalResponse & { offer: string | null; answer: string | null }>;
  /** The peer connection's ICE connection state, null without a call. */
  iceState(): Promise<string | null>;
  /** One digit as RFC 4733 events (`rtp`, the browser's RTCDTMFSender) or a SIP INFO. */
  sendDtmf(digit: string, via?: 'rtp' | 'info'): Promise<boolean>;
  /**
   * Listens to the remote track for `windowMs` through a WebAudio AnalyserNode, probing the
   * frequencies of `probesHz`.
   */
  listen(windowMs: number, probesHz?: readonly number[]): Promise<RemoteAudio>;
  /** Every SessionState the current call went through (Establishing, Established...). */
  sessionStates(): Promise<string[]>;
  /** Unregisters, stops the UserAgent, closes the browser and the page server. */
  close(): Promise<void>;
}

const PAGE_SCRIPTS = {
  'sip.js': fileURLToPath(new URL('./browser-phone-page.mjs', import.meta.url)),
  jssip: fileURLToPath(new URL('./jssip-phone-page.mjs', import.meta.url)),
};

/** The page script with its SIP stack, as one browser bundle. */
async function bundle(stack: keyof typeof PAGE_SCRIPTS): Promise<string> {
  const result = await build({
    entryPoints: [PAGE_SCRIPTS[stack]],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox115'],
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/** A mono 16-bit 48 kHz WAV of a sine at `hz`, -6 dBFS, two seconds (Chromium loops it). */
function sineWav(hz: number): Buffer {
  const rate = 48_000;
  const pcm = Int16Array.from({ length: rate * 2 }, (_, i) =>
    Math.round(16_384 * Math.sin((2 * Math.PI * hz * i) / rate)),
  );
  return monoWav(pcm, rate);
}

async function servePage(script: string): Promise<{ server: Server; url: string }> {
  const html =
    '<!doctype html><title>voxgate browser phone</title><script type="module" src="/phone.js"></script>';
  const server = createServer((request, response) => {
    const isScript = request.url === '/phone.js';
    response.setHeader('content-type', isScript ? 'text/javascript' : 'text/html');
    response.end(isScript ? script : html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

export async function startBrowserPhone(options: BrowserPhoneOptions = {}): Promise<BrowserPhone> {
  const dir = await mkdtemp(join(tmpdir(), 'voxgate-browser-phone-'));
  const wav = join(dir, 'tone.wav');
  await writeFile(wav, sineWav(options.toneHz ?? 1000));
  const { server, url } = await servePage(await bundle(options.stack ?? 'sip.js'));
  let chromium: HeadlessBrowser | null = null;
  try {
    chromium =
      options.browser === 'firefox'
        ? await launchHeadlessFirefox({
            acceptInsecureCerts: options.acceptInsecureCertificates ?? false,
            prefs: {
              'media.navigator.streams.fake': true,
              'media.navigator.permission.disabled': true,
              'media.autoplay.default': 0,
              'media.autoplay.block-webaudio': false,
              'media.autoplay.blocking_policy': 0,
            },
          })
        : await launchHeadlessBrowser({
            args: [
              '--use-fake-device-for-media-stream',
              '--use-fake-ui-for-media-stream',
              `--use-file-for-fake-audio-capture=${wav}`,
              '--autoplay-policy=no-user-gesture-required',
              ...(options.acceptInsecureCertificates ? ['--ignore-certificate-errors'] : []),
            ],
          });
    const page = await chromium.browser.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(String(error)));
    await page.goto(url);
    await page.waitForFunction('window.phone !== undefined', { timeout: 10_000 });
    return phoneOn(page, consoleErrors, async () => {
      await page.evaluate('window.phone.stop()').catch(() => {});
      await chromium?.close();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    });
  } catch (error) {
    await chromium?.close();
    server.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * What a page without an audio output heard (its recording, 16-bit samples in base64), in the
 * terms of its live analyser: the strongest frequency (to 10 Hz) and the RMS level.
 */
function recordedAudio(
  recorded: string,
  sampleRate: number,
  probesHz: readonly number[],
): RemoteAudio {
  const bytes = Buffer.from(recorded, 'base64');
  const pcm = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length >> 1);
  let squares = 0;
  for (const s of pcm) squares += (s / 32768) ** 2;
  const rms = Math.sqrt(squares / Math.max(pcm.length, 1));
  const dominantHz = strongestFrequency(pcm, sampleRate, 10);
  const strongest = powerAt(pcm, sampleRate, dominantHz);
  return {
    dominantHz,
    levelDbfs: rms === 0 ? -Infinity : 20 * Math.log10(rms),
    sampleRate,
    probes: Object.fromEntries(
      probesHz.map((hz) => [hz, 10 * Math.log10(powerAt(pcm, sampleRate, hz) / strongest)]),
    ),
  };
}

function phoneOn(page: Page, consoleErrors: string[], close: () => Promise<void>): BrowserPhone {
  // A call by name with JSON arguments: a function handed to page.evaluate would carry the
  // test's transpiled source (and its helpers) into the page.
  const run = <T>(method: string, ...args: unknown[]): Promise<T> =>
    page.evaluate(
      `window.phone[${JSON.stringify(method)}](...${JSON.stringify(args)})`,
    ) as Promise<T>;
  /** A REGISTER the page sent: its 2xx, or a rejection with the status of its refusal. */
  const registration = async (method: string, ...args: unknown[]): Promise<FinalResponse> => {
    const outcome = await run<FinalResponse & { registered: boolean }>(method, ...args);
    if (!outcome.registered) {
      throw new Error(`REGISTER refused: ${outcome.status} ${outcome.reason}`);
    }
    return { status: outcome.status, reason: outcome.reason };
  };
  return {
    page,
    consoleErrors,
    register: (wsUrl, aor, token) => registration('register', wsUrl, aor, token),
    registerDigest: (wsUrl, aor, user, password) =>
      registration('registerDigest', wsUrl, aor, user, password),
    reconnect: () => registration('reconnect'),
    registerAgain: () => registration('registerAgain'),
    call: (target, token) => run('call', target, token ?? null),
    ringing: (timeoutMs = 10_000) => run('ringing', timeoutMs),
    answer: (timeoutMs = 10_000) => run('answer', timeoutMs),
    hangUp: () => run('hangUp'),
    sendDtmf: (digit, via = 'rtp') => run('sendDtmf', digit, via),
    restartIce: () => run('restartIce'),
    iceState: () => run('iceState'),
    listen: async (windowMs, probesHz = []) => {
      const heard = await run<RemoteAudio | { recorded: string; sampleRate: number }>(
        'listen',
        windowMs,
        probesHz,
      );
      return 'recorded' in heard
        ? recordedAudio(heard.recorded, heard.sampleRate, probesHz)
        : heard;
    },
    sessionStates: () => run('states'),
    ringingState: () => run('ringingState'),
    close,
  };
}

/**
 * What a browser phone test starts with on the gateway: an application named `appName` that
 * answers at the client app's `/answer` and `/hangup` and runs the calls of the account's
 * endpoints and token users, and an access token for `sub` that may take and place calls.
 */
export async function browserUserSetup(
  gw: TestGateway,
  app: ClientApp,
  appName: string,
  sub: string,
): Promise<{ appId: string; token: string }> {
  const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
    json: {
      app_name: appName,
      answer_url: `${app.baseUrl}/answer`,
      hangup_url: `${app.baseUrl}/hangup`,
      default_endpoint_app: true,
    },
  });
  expect(application.status).toBe(201);
  return { appId: application.body.app_id as string, token: await voiceToken(gw, sub) };
}

/**
 * Places a call with `POST Call/` from +14155550100 to `to`, run by the client app's document
 * at `answerPath` (and its hangup callback at `hangupPath`, when given); expects the 201.
 */
export async function placeCall(
  gw: TestGateway,
  app: ClientApp,
  to: string,
  answerPath: string,
  hangupPath?: string,
): Promise<void> {
  const placed = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
    json: {
      from: '+14155550100',
      to,
      answer_url: `${app.baseUrl}${answerPath}`,
      ...(hangupPath !== undefined && { hangup_url: `${app.baseUrl}${hangupPath}` }),
    },
  });
  expect(placed.status).toBe(201);
}

/** An access token for `sub` that may take and place calls. */
export async function voiceToken(gw: TestGateway, sub: string): Promise<string> {
  const minted = await gw.request('POST', `/v1/Account/${gw.main.id}/JWT/Token/`, {
    json: { sub, per: { voice: { incoming_allow: true, outgoing_allow: true } } },
  });
  expect(minted.status).toBe(200);
  return minted.body.token as string;
}
