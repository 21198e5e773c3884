import { spawn } from 'node:child_process';
import { guardedRequest } from '../../core/guarded-http.js';
import { selfHostedGuard, type OutboundGuard } from '../../core/outbound-guard.js';
import { PcmCache } from './pcm-cache.js';
import type { Pcm } from './wav.js';

export interface AudioFileSourceOptions {
  /** The largest file fetched, in octets (default 10 MiB). */
  maxBytes?: number;
  /** How long a download may take (default 15 s). */
  timeoutMs?: number;
  /** The ffmpeg command (default `ffmpeg`). */
  command?: string;
  /** Octets of decoded PCM kept before the least recently used go (default 128 MiB). */
  cacheBytes?: number;
  /** The most of a file decoded, in seconds (default 30 minutes); the rest is not played. */
  maxSeconds?: number;
  /** What every file URL and redirect goes through; the default profile when absent. */
  guard?: OutboundGuard;
}

/** Redirects a file URL may take, each checked by the outbound guard. */
const MAX_REDIRECTS = 5;

const RATES = new Set([8000, 16000, 24000, 48000]);

/**
 * Play's audio files: a wav or mp3 URL is downloaded (up to a size limit) and decoded once by
 * ffmpeg (Debian) to mono 16-bit PCM at the rate asked for; the result is cached per URL and
 * rate, so a prompt played on many calls is fetched and decoded once. Only WAV and MP3 are
 * decoded (the voice document's Play), and at most maxSeconds of one: a small file of another
 * format, or of compressed silence, cannot turn into gigabytes of PCM.
 */
export class AudioFileSource {
  private readonly cache: PcmCache;

  constructor(private readonly options: AudioFileSourceOptions = {}) {
    this.cache = new PcmCache(options.cacheBytes ?? 128 * 1024 * 1024);
  }

  /** Downloads started (cache misses). */
  get fetched(): number {
    return this.cache.misses;
  }

  load(url: string, rate: number): Promise<Pcm> {
    if (!RATES.has(rate)) {
      return Promise.reject(
        new Error(`Expected a rate of 8000, 16000, 24000 or 48000 Hz but received ${rate}`),
      );
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return Promise.reject(new Error(`Expected an http or https URL but received ${url}`));
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      return Promise.reject(new Error(`Expected an http or https URL but received ${url}`));
    }
    const key = `${rate}\u0000${url}`;
    return this.cache.get(key, () =>
      this.download(url).then((data) => this.decode(data, rate, url)),
    );
  }

  private async download(url: string): Promise<Buffer> {
    const limit = this.options.maxBytes ?? 10 * 1024 * 1024;
    const { response } = await guardedRequest(
      this.options.guard ?? selfHostedGuard(),
      new URL(url),
      {
        method: 'GET',
        headers: { Accept: 'audio/*, */*' },
        maxRedirects: MAX_REDIRECTS,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 15_000),
      },
    ).catch((error: Error) => {
      throw new Error(`Could not fetch ${url}: ${error.message}`);
    });
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      response.resume();
      throw new Error(`Could not fetch ${url}: HTTP ${status}`);
    }
    const declared = Number(response.headers['content-length'] ?? NaN);
    if (declared > limit) {
      response.destroy();
      throw new Error(`${url} is ${declared} octets, more than the ${limit} allowed`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        response.destroy();
        throw new Error(`${url} is more than the ${limit} octets allowed`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  private decode(data: Buffer, rate: number, url: string): Promise<Pcm> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        this.options.command ?? 'ffmpeg',
        [
          '-hide_banner',
          '-loglevel',
          'error',
          '-format_whitelist',
          'wav,mp3',
          '-i',
          'pipe:0',
          '-t',
          String(this.options.maxSeconds ?? 1800),
          '-f',
          's16le',
          '-ac',
          '1',
          '-ar',
          String(rate),
          'pipe:1',
        ],
        { stdio: ['pipe', 'pipe', 'pipe'] },
      );
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => (err += String(chunk)));
      child.on('error', (error) => reject(new Error(`ffmpeg could not start: ${error.message}`)));
      child.stdin.on('error', () => {}); // ffmpeg may stop reading a file it cannot decode
      child.on('close', (code) => {
        const pcm = Buffer.concat(out);
        if (code !== 0 || pcm.length === 0) {
          reject(new Error(`${url} is not WAV or MP3 audio: ${err.trim().split('\n')[0] ?? ''}`));
          return;
        }
        const samples = new Int16Array(pcm.length >> 1);
        for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2);
        resolve({ rate, samples });
      });
      child.stdin.end(data);
    });
  }
}
