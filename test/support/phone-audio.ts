import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { strongestFrequency, tone } from './signal.js';
import type { StreamServer } from './stream-server.js';
import { until } from './wait.js';

/**
 * Audio checks for calls between a softphone (baresip) and a bidirectional stream: what the
 * stream heard of the phone, and what the phone decoded of the stream (baresip's sndfile
 * module writes it to a `-dec` WAV file).
 */

/** The first channel of a 16-bit WAV file (its data chunk), and its rate. */
export function wavSamples(file: Buffer): { rate: number; channels: number; pcm: Int16Array } {
  const channels = file.readUInt16LE(22);
  const rate = file.readUInt32LE(24);
  let at = 12;
  while (file.toString('ascii', at, at + 4) !== 'data') at += 8 + file.readUInt32LE(at + 4);
  const data = file.subarray(at + 8, at + 8 + file.readUInt32LE(at + 4));
  const pcm = new Int16Array(data.length / 2 / channels);
  for (let i = 0; i < pcm.length; i++) pcm[i] = data.readInt16LE(i * 2 * channels);
  return { rate, channels, pcm };
}

/**
 * The strongest frequency of the newest `-dec` dump in `dir` (one second from 200 ms after
 * its first sound), which is then removed so the next call's is the newest.
 */
export async function strongestDecodedHz(dir: string): Promise<number> {
  const files = await readdir(dir);
  const decoded = files
    .filter((name) => name.includes('-dec'))
    .sort()
    .at(-1);
  if (decoded === undefined) throw new Error(`no decoded audio dump among: ${files.join(', ')}`);
  const { rate, pcm } = wavSamples(await readFile(join(dir, decoded)));
  await rm(join(dir, decoded));
  const loud = pcm.findIndex((s) => Math.abs(s) > 2000);
  if (loud < 0) throw new Error(`${decoded} is silent`);
  return strongestFrequency(pcm.subarray(loud + rate / 5, loud + rate / 5 + rate), rate, 10);
}

/**
 * Plays three seconds of `hz` to the call of the stream server's `connection` (L16 at `rate`,
 * as the stream was asked for), and resolves to one second of what the phone sent, from 200 ms
 * after its first sound (its SRTP may start a moment after the call's media).
 */
export async function exchangeTones(
  bot: StreamServer,
  connection: number,
  { rate, hz }: { rate: 8000 | 16000; hz: number },
): Promise<Int16Array> {
  const ws = await bot.connection(connection);
  await until(() => ws.of('start').length === 1, 15_000);
  const back = tone(rate, hz, 3, 8000);
  const chunk = rate / 10;
  for (let at = 0; at < back.length; at += chunk) {
    ws.send({
      event: 'playAudio',
      media: {
        contentType: 'audio/x-l16',
        sampleRate: rate,
        payload: Buffer.from(back.buffer, at * 2, chunk * 2).toString('base64'),
      },
    });
  }
  const samples = () => {
    const heard = Buffer.concat(ws.payloads('inbound'));
    const pcm = new Int16Array(heard.length >> 1);
    for (let i = 0; i < pcm.length; i++) pcm[i] = heard.readInt16LE(i * 2);
    return pcm;
  };
  const loudAt = (pcm: Int16Array) => pcm.findIndex((s) => Math.abs(s) > 1000);
  const skip = rate / 5;
  await until(() => {
    const pcm = samples();
    return loudAt(pcm) >= 0 && pcm.length >= loudAt(pcm) + skip + rate;
  }, 15_000);
  const pcm = samples();
  return pcm.subarray(loudAt(pcm) + skip, loudAt(pcm) + skip + rate);
}
