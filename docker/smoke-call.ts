/**
 * One call through a gateway running in Docker, with its audio checked; docker/smoke-test.sh
 * runs it against each compose file. It serves an answer document on SMOKE_LOCAL_HOST (an
 * address of this machine the containers reach), creates an application and a number over
 * REST, calls the number with examples/call-in.ts from that address, and checks what the
 * caller heard: the answer's Speak (espeak-ng in the image) as sound that is not the tone, then
 * its Play of a 16 kHz WAV of 1000 Hz (ffmpeg in the image) as 1000 Hz.
 *
 *   SMOKE_API=http://127.0.0.1:8080 SMOKE_SIP=192.0.2.2:5060 SMOKE_LOCAL_HOST=192.0.2.2 \
 *   SMOKE_AUTH_ID=MA... SMOKE_AUTH_TOKEN=... node --import tsx docker/smoke-call.ts
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monoWav } from '../examples/lib/wav.js';

const TONE_HZ = 1000;
const TONE_SECONDS = 4;
const WAV_RATE = 16000;

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const api = required('SMOKE_API');
const sip = required('SMOKE_SIP');
const localHost = required('SMOKE_LOCAL_HOST');
const authId = required('SMOKE_AUTH_ID');
const authToken = required('SMOKE_AUTH_TOKEN');
const seconds = Number(process.env.SMOKE_SECONDS ?? 12);

/** A mono 16-bit WAV of a tone, at a rate the gateway has to convert. */
function toneWav(): Buffer {
  const pcm = Int16Array.from({ length: WAV_RATE * TONE_SECONDS }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * TONE_HZ * i) / WAV_RATE)),
  );
  return monoWav(pcm, WAV_RATE);
}

/** Serves the answer document and the tone, counting what the gateway fetched. */
async function answerServer(): Promise<{ base: string; fetched: string[]; close(): void }> {
  const fetched: string[] = [];
  const wav = toneWav();
  const server = createServer((request, response) => {
    request.resume();
    const path = (request.url ?? '/').split('?')[0]!;
    fetched.push(path);
    if (path === '/answer') {
      const { port } = server.address() as AddressInfo;
      response.setHeader('Content-Type', 'application/xml');
      response.end(
        '<Response><Speak>Hello. This call comes from the voxgate image, through Docker.</Speak>' +
          `<Play>http://${localHost}:${port}/tone.wav</Play><Wait length="5"/></Response>`,
      );
    } else if (path === '/tone.wav') {
      response.setHeader('Content-Type', 'audio/wav');
      response.end(wav);
    } else {
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, localHost, resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://${localHost}:${port}`, fetched, close: () => server.close() };
}

async function post(path: string, body: object): Promise<Record<string, unknown>> {
  const response = await fetch(`${api}/v1/Account/${authId}/${path}`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${authId}:${authToken}`).toString('base64')}`,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** What examples/call-in.ts printed, line by line. */
function callIn(number: string): Promise<string[]> {
  const args = ['--import', 'tsx', 'examples/call-in.ts', number, '--gateway-sip', sip];
  args.push('--local-host', localHost, '--seconds', String(seconds), '--tone', '440');
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += String(chunk);
    process.stdout.write(chunk);
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out.split('\n')) : reject(new Error(`call-in exited with ${code}`)),
    );
  });
}

/** The heard seconds: the strongest frequency, or null for silence. */
function heard(lines: string[]): (number | null)[] {
  const seconds: (number | null)[] = [];
  for (const line of lines) {
    const match = /^heard +\d+ s: (?:(\d+) Hz strongest|silence)/.exec(line);
    if (match) seconds.push(match[1] === undefined ? null : Number(match[1]));
  }
  return seconds;
}

async function main(): Promise<void> {
  const server = await answerServer();
  try {
    const number = `1415555${String(Math.floor(Math.random() * 1e4)).padStart(4, '0')}`;
    const app = await post('Application/', {
      app_name: `docker smoke ${number}`,
      answer_url: `${server.base}/answer`,
    });
    // The caller reaches the container from the host, through the compose network's gateway.
    const carrier = await post('IncomingCarrier/', {
      name: `docker smoke ${number}`,
      ip_set: '127.0.0.0/8,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16',
    });
    await post('Number/', {
      numbers: number,
      carrier: carrier.carrier_id,
      region: 'local',
      app_id: app.app_id,
    });
    const lines = await callIn(number);
    const seconds = heard(lines);
    const toneSeconds = seconds.filter((hz) => hz === TONE_HZ).length;
    const firstTone = seconds.indexOf(TONE_HZ);
    const speechSeconds = seconds
      .slice(0, firstTone === -1 ? seconds.length : firstTone)
      .filter((hz) => hz !== null).length;
    const problems: string[] = [];
    if (!lines.some((line) => line.startsWith('answered:'))) problems.push('not answered');
    if (!server.fetched.includes('/answer')) problems.push('the answer URL was not fetched');
    if (!server.fetched.includes('/tone.wav')) problems.push('the WAV was not fetched');
    if (speechSeconds < 1) problems.push('no speech heard before the tone');
    if (toneSeconds < TONE_SECONDS - 1) {
      problems.push(`${toneSeconds} s of ${TONE_HZ} Hz heard, at least ${TONE_SECONDS - 1} wanted`);
    }
    console.log(
      `smoke call: ${seconds.length} s heard, ${speechSeconds} s of speech, ` +
        `${toneSeconds} s of ${TONE_HZ} Hz; fetched ${server.fetched.join(' ')}`,
    );
    if (problems.length > 0) throw new Error(`smoke call failed: ${problems.join('; ')}`);
    console.log('smoke call: OK');
  } finally {
    server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
