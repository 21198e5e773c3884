import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AudioFileSource } from '../../../src/media/sources/audio-file-source.js';

/**
 * Play's files from a real HTTP server: a 1 kHz tone made by sox (wav) and ffmpeg (mp3),
 * decoded by ffmpeg at the call's rate, once.
 */
let dir: string;
let server: Server;
let base: string;
const served: Record<string, Buffer> = {};
let requests = 0;

/** The strongest of a few candidate frequencies, by Goertzel power. */
function toneHz(samples: Int16Array, rate: number): number {
  const candidates = [500, 800, 1000, 1200, 2000];
  let best = 0;
  let bestPower = -1;
  for (const f of candidates) {
    const k = 2 * Math.cos((2 * Math.PI * f) / rate);
    let s1 = 0;
    let s2 = 0;
    for (const x of samples) [s2, s1] = [s1, x + k * s1 - s2];
    const power = s1 * s1 + s2 * s2 - k * s1 * s2;
    if (power > bestPower) [bestPower, best] = [power, f];
  }
  return best;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'voxgate-play-'));
  const wav = join(dir, 'tone.wav');
  const mp3 = join(dir, 'tone.mp3');
  execFileSync('sox', [
    '-n',
    '-r',
    '44100',
    '-c',
    '2',
    '-b',
    '16',
    wav,
    'synth',
    '2',
    'sine',
    '1000',
    'vol',
    '0.5',
  ]);
  execFileSync('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-i',
    wav,
    '-codec:a',
    'libmp3lame',
    '-b:a',
    '64k',
    mp3,
  ]);
  served['/tone.wav'] = readFileSync(wav);
  served['/tone.mp3'] = readFileSync(mp3);
  const ogg = join(dir, 'tone.ogg');
  execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', wav, ogg]);
  served['/tone.ogg'] = readFileSync(ogg);
  served['/big.wav'] = Buffer.alloc(2 * 1024 * 1024, 1);
  served['/chunked.wav'] = served['/big.wav'];
  served['/text.wav'] = Buffer.from('this is not audio at all, just some words in a file');
  server = createServer((req, res) => {
    requests++;
    const body = served[req.url ?? ''];
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    // One file goes chunked, without a Content-Length, so the limit is found while reading.
    const length = req.url === '/chunked.wav' ? {} : { 'content-length': body.length };
    res.writeHead(200, { 'content-type': 'audio/wav', ...length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('AudioFileSource', () => {
  it.each([
    ['wav', 8000],
    ['wav', 16000],
    ['mp3', 8000],
    ['mp3', 24000],
  ])('decodes a %s tone at %i Hz, mono, keeping its frequency and length', async (kind, rate) => {
    const pcm = await new AudioFileSource().load(`${base}/tone.${kind}`, rate);
    expect(pcm.rate).toBe(rate);
    // Two seconds, give or take the mp3 encoder's padding.
    expect(Math.abs(pcm.samples.length - 2 * rate)).toBeLessThan(rate * 0.1);
    expect(toneHz(pcm.samples.subarray(rate / 10, rate), rate)).toBe(1000);
  });

  it('fetches and decodes a file once per rate, however often it is played', async () => {
    const source = new AudioFileSource();
    const before = requests;
    const [a, b] = await Promise.all([
      source.load(`${base}/tone.wav`, 8000),
      source.load(`${base}/tone.wav`, 8000),
    ]);
    expect(b).toBe(a);
    expect(await source.load(`${base}/tone.wav`, 8000)).toBe(a);
    expect(requests - before).toBe(1);
    await source.load(`${base}/tone.wav`, 16000);
    expect(source.fetched).toBe(2);
  });

  it('decodes no more than maxSeconds of a file', async () => {
    const source = new AudioFileSource({ maxSeconds: 1 });
    const pcm = await source.load(`${base}/tone.wav`, 8000);
    expect(pcm.samples.length).toBe(8000);
    expect(toneHz(pcm.samples, 8000)).toBe(1000);
  });

  it('refuses a file over the size limit, a missing one, and one that is not WAV or MP3 audio', async () => {
    const source = new AudioFileSource({ maxBytes: 1024 * 1024 });
    await expect(source.load(`${base}/big.wav`, 8000)).rejects.toThrow(
      `${base}/big.wav is 2097152 octets, more than the 1048576 allowed`,
    );
    await expect(source.load(`${base}/chunked.wav`, 8000)).rejects.toThrow(
      `${base}/chunked.wav is more than the 1048576 octets allowed`,
    );
    await expect(source.load(`${base}/missing.wav`, 8000)).rejects.toThrow('HTTP 404');
    await expect(source.load(`${base}/text.wav`, 8000)).rejects.toThrow(
      `${base}/text.wav is not WAV or MP3 audio`,
    );
    await expect(source.load(`${base}/tone.ogg`, 8000)).rejects.toThrow(
      `${base}/tone.ogg is not WAV or MP3 audio: `,
    );
    await expect(source.load('file:///etc/passwd', 8000)).rejects.toThrow(
      'Expected an http or https URL but received file:///etc/passwd',
    );
    await expect(source.load(`${base}/tone.wav`, 11025)).rejects.toThrow(
      'Expected a rate of 8000, 16000, 24000 or 48000 Hz but received 11025',
    );
  });
});
