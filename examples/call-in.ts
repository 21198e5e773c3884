/**
 * A test caller for a gateway without a carrier or a softphone: it calls a number (or any SIP
 * URI) on the gateway over SIP/UDP, sends audio over RTP (a tone, a sound file, or espeak-ng
 * speech), presses keys (RFC 4733), and prints, each second, what it heard back: the strongest
 * frequency and the level. `--record` keeps what came back as a WAV file to listen to.
 *
 *   npm run example:call-in -- 14155550123
 *   npm run example:call-in -- 14155550123 --say "Hello, is anybody there?" --record heard.wav
 *   npm run example:call-in -- 14155550123 --tone 440 --dtmf 1 --dtmf-at 3 --seconds 8
 *   npm run example:call-in -- sip:anything@127.0.0.1 --user alice123456789012 --password ...
 *
 * Unlike the other examples this one is built on voxgate's own SIP stack and codecs (from
 * src/), since a caller is not something an application would write; a softphone does the
 * same job (README, Quickstart).
 */
import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { systemScheduler } from '../src/core/scheduler.js';
import { muLawDecode, muLawEncode } from '../src/media/codec/g711.js';
import { encodeTelephoneEvent } from '../src/media/dtmf/index.js';
import { parseRtpPacket, serializeRtpPacket } from '../src/media/rtp/rtp-packet.js';
import { DialogLayer } from '../src/sip/dialog/dialog-layer.js';
import { SipStack } from '../src/sip/sip-stack.js';
import { InviteClient } from '../src/sip/ua/invite-client.js';
import { flag, numberSetting, positional, setting } from './lib/settings.js';
import { monoWav } from './lib/wav.js';

const RATE = 8000;
const FRAME = 160; // 20 ms of PCMU
const EVENT_PT = 101;
const DIGIT_EVENTS: Record<string, number> = { '*': 10, '#': 11, A: 12, B: 13, C: 14, D: 15 };

const VALUE_FLAGS = [
  'gateway-sip',
  'local-host',
  'from',
  'tone',
  'say',
  'play',
  'dtmf',
  'dtmf-at',
  'seconds',
  'record',
  'user',
  'password',
];
const destination = positional(VALUE_FLAGS) ?? process.env.CALL_IN_TO;
if (!destination) {
  console.error(
    'usage: call-in <number or sip: URI> [--gateway-sip 127.0.0.1:5060] [--tone 440 | ' +
      '--say "text" | --play file] [--dtmf 123 --dtmf-at 3] [--seconds 10] [--record out.wav] ' +
      '[--user name --password secret]',
  );
  process.exit(2);
}
const gatewaySip = setting('gateway-sip', 'VOXGATE_SIP', '127.0.0.1:5060');
const localHost = setting('local-host', 'CALL_IN_LOCAL_HOST', '127.0.0.1');
const seconds = numberSetting('seconds', 'CALL_IN_SECONDS', 10);
const digits = flag('dtmf') ?? '';
const digitsAt = numberSetting('dtmf-at', 'CALL_IN_DTMF_AT', 3);
const target = destination.startsWith('sip:')
  ? destination
  : `sip:${destination.replace(/^\+/, '')}@${gatewaySip}`;

const log = (line: string) => console.log(line);

/** What the caller says: 20 ms frames of 8 kHz PCM, played in a loop. */
function source(): { what: string; pcm: Int16Array } {
  const file = flag('play');
  const text = flag('say');
  if (file) return { what: `the file ${file}`, pcm: decodeWithFfmpeg(file) };
  if (text) {
    // espeak-ng writes a WAV file on stdout; ffmpeg takes it to 8 kHz mono.
    const wav = execFileSync('espeak-ng', ['--stdout', text], { maxBuffer: 64 << 20 });
    return { what: `espeak-ng saying "${text}"`, pcm: decodeWithFfmpeg('pipe:0', wav) };
  }
  const hz = Number(flag('tone') ?? 440);
  const pcm = Int16Array.from({ length: RATE }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / RATE)),
  );
  return { what: `a ${hz} Hz tone`, pcm };
}

function decodeWithFfmpeg(input: string, stdin?: Buffer): Int16Array {
  const raw = execFileSync(
    'ffmpeg',
    ['-v', 'error', '-i', input, '-f', 's16le', '-ac', '1', '-ar', String(RATE), 'pipe:1'],
    { input: stdin, maxBuffer: 256 << 20 },
  );
  return new Int16Array(raw.buffer, raw.byteOffset, raw.length >> 1).slice();
}

/** Level in dBFS and the strongest frequency (10 Hz grid, Goertzel) of one second heard. */
function summary(samples: Int16Array): string {
  let sum = 0;
  for (const s of samples) sum += s * s;
  const rms = Math.sqrt(sum / Math.max(1, samples.length));
  const dbfs = 20 * Math.log10(Math.max(rms, 1) / 32768);
  if (dbfs < -50) return `silence (${dbfs.toFixed(1)} dBFS)`;
  let best = 0;
  let bestPower = -1;
  for (let hz = 100; hz <= 3800; hz += 10) {
    const coeff = 2 * Math.cos((2 * Math.PI * hz) / RATE);
    let s1 = 0;
    let s2 = 0;
    for (const x of samples) {
      const s0 = x + coeff * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    if (power > bestPower) [best, bestPower] = [hz, power];
  }
  return `${best} Hz strongest, ${dbfs.toFixed(1)} dBFS`;
}

const wavFile = (pcm: Int16Array): Buffer => monoWav(pcm, RATE);

async function main(): Promise<void> {
  const speech = source();
  const rtp = createSocket('udp4');
  await new Promise<void>((resolve) => rtp.bind(0, localHost, () => resolve()));
  const rtpPort = rtp.address().port;

  const stack = new SipStack({ scheduler: systemScheduler, publicHost: localHost });
  await stack.listenUdpTcp(localHost, 0);
  const uac = new InviteClient(stack, new DialogLayer(stack));

  const offer = [
    'v=0',
    `o=call-in ${Date.now()} 1 IN IP4 ${localHost}`,
    's=voxgate call-in',
    `c=IN IP4 ${localHost}`,
    't=0 0',
    `m=audio ${rtpPort} RTP/AVP 0 ${EVENT_PT}`,
    'a=rtpmap:0 PCMU/8000',
    `a=rtpmap:${EVENT_PT} telephone-event/8000`,
    `a=fmtp:${EVENT_PT} 0-15`,
    'a=ptime:20',
    'a=sendrecv',
    '',
  ].join('\r\n');

  const user = flag('user');
  const password = flag('password');
  log(`calling ${target}, sending ${speech.what}`);
  const call = uac.invite({
    target,
    from: `sip:${user ?? 'call-in'}@${localHost}`,
    fromDisplayName: 'voxgate call-in',
    sdp: offer,
    ...(user && password ? { credentials: { username: user, password } } : {}),
    delegate: { onProgress: (p) => log(`${p.status} ${p.reason}`) },
  });
  const outcome = await call.outcome;
  if (!outcome.answered) {
    log(`not answered: ${outcome.failure.status} ${outcome.failure.reason}`);
    await stack.close();
    rtp.close();
    process.exitCode = 1;
    return;
  }
  const answer = outcome.sdp ?? '';
  const remotePort = Number(/^m=audio (\d+)/m.exec(answer)?.[1] ?? 0);
  const remoteHost = /^c=IN IP4 (\S+)/m.exec(answer)?.[1] ?? '127.0.0.1';
  log(`answered: sending RTP to ${remoteHost}:${remotePort} from ${localHost}:${rtpPort}`);

  // What comes back: mu-law (payload type 0) decoded, one line per second.
  const heard: Int16Array[] = [];
  let second: Int16Array[] = [];
  let secondsHeard = 0;
  rtp.on('message', (data) => {
    let packet;
    try {
      packet = parseRtpPacket(data);
    } catch {
      return;
    }
    if (packet.payloadType !== 0) return;
    const pcm = muLawDecode(packet.payload);
    heard.push(pcm);
    second.push(pcm);
    if (second.reduce((n, p) => n + p.length, 0) >= RATE) {
      const joined = Int16Array.from(second.flatMap((p) => [...p]));
      second = [];
      secondsHeard++;
      log(`heard ${String(secondsHeard).padStart(3)} s: ${summary(joined)}`);
    }
  });

  // What we send: 20 ms frames of the source, paced by the clock, in a loop.
  let sequence = Math.floor(Math.random() * 0xffff);
  let timestamp = Math.floor(Math.random() * 0xffffffff);
  const ssrc = Math.floor(Math.random() * 0xffffffff);
  const sendPacket = (payloadType: number, payload: Uint8Array, marker = false, ts = timestamp) => {
    const packet = serializeRtpPacket({
      marker,
      payloadType,
      sequenceNumber: sequence,
      timestamp: ts,
      ssrc,
      payload,
    });
    sequence = (sequence + 1) & 0xffff;
    rtp.send(packet, remotePort, remoteHost);
  };
  const pendingDigits = [...digits];
  let pressing: { event: number; frame: number; timestamp: number } | null = null;
  let frame = 0;
  let ticks = 0;
  const started = Date.now();
  let ended = false;
  const finished = new Promise<string>((resolve) => {
    outcome.dialog.delegate = {
      onTerminated: (end) => {
        ended = true;
        resolve(end.kind === 'bye' && end.by === 'remote' ? 'the gateway hung up' : end.kind);
      },
    };
    // One packet (or, between keys, none) every 20 ms, on the clock.
    const tick = () => {
      if (ended) return;
      const elapsed = (Date.now() - started) / 1000;
      if (elapsed >= seconds) {
        resolve(`hanging up after ${seconds} s`);
        return;
      }
      if (!pressing && pendingDigits.length > 0 && elapsed >= digitsAt) {
        const digit = pendingDigits.shift()!;
        log(`pressing ${digit}`);
        pressing = {
          event: DIGIT_EVENTS[digit.toUpperCase()] ?? Number(digit),
          frame: 0,
          timestamp,
        };
      }
      if (pressing) {
        // RFC 4733: one timestamp for the whole key, the marker on its first packet, the end
        // packet three times; 100 ms of key, then 140 ms of nothing before audio or the next.
        const end = pressing.frame >= 4;
        if (pressing.frame <= 6) {
          const duration = Math.min(pressing.frame + 1, 5) * FRAME;
          const payload = encodeTelephoneEvent({
            event: pressing.event,
            end,
            volume: 10,
            duration,
          });
          sendPacket(EVENT_PT, payload, pressing.frame === 0, pressing.timestamp);
        }
        if (++pressing.frame >= 12) pressing = null;
      } else {
        const usable = speech.pcm.length - (speech.pcm.length % FRAME);
        const offset = usable > 0 ? (frame * FRAME) % usable : 0;
        const pcm = speech.pcm.subarray(offset, offset + FRAME);
        sendPacket(0, muLawEncode(pcm.length === FRAME ? pcm : new Int16Array(FRAME)));
        frame++;
      }
      timestamp = (timestamp + FRAME) >>> 0;
      ticks++;
      setTimeout(tick, Math.max(0, started + ticks * 20 - Date.now()));
    };
    tick();
  });

  const why = await finished;
  log(why);
  if (!ended) await outcome.dialog.bye().catch(() => undefined);
  const record = flag('record');
  if (record) {
    const all = new Int16Array(heard.reduce((n, p) => n + p.length, 0));
    let offset = 0;
    for (const p of heard) {
      all.set(p, offset);
      offset += p.length;
    }
    writeFileSync(record, wavFile(all));
    log(`wrote what was heard (${(all.length / RATE).toFixed(1)} s) to ${record}`);
  }
  rtp.close();
  await stack.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
