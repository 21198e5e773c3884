import { muLawDecode, muLawEncode } from '../../src/media/codec/g711.js';
import { OpusDecoder, OpusEncoder } from '../../src/media/codec/opus.js';
import type { Dialog } from '../../src/sip/dialog/dialog.js';
import { RtpPeer } from './rtp-peer.js';
import type { SipPeer } from './sip-peer.js';
import { tone } from './signal.js';

/** What a phone's RTP carries: PCMU at 8 kHz, or Opus coded and decoded at 16 kHz. */
export type TonePhoneCodec = 'pcmu' | 'opus';

const OPUS_PT = 111;

/**
 * A phone built on the project's SIP stack and an RtpPeer: it calls the gateway offering PCMU
 * (and telephone-event 101), or Opus alone, and once answered plays its own tone, one 20 ms
 * frame every 20 ms, keeping every packet it receives. `byeReceived` turns true when the
 * gateway hangs up.
 */
export class TonePhone {
  byeReceived = false;
  /** While true the phone sends silence in place of its tone (the packets keep flowing). */
  silent = false;
  /** Epoch ms it sent its first tone frame after its last silence. */
  toneSentAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private dialog: Dialog | null = null;
  /** About when the RtpPeer opened: received packets' `at` counts from it. */
  private readonly opened = Date.now();

  private constructor(
    readonly rtp: RtpPeer,
    readonly hz: number,
    readonly codec: TonePhoneCodec,
  ) {}

  /** The rate of the phone's audio, played and heard. */
  get rate(): 8000 | 16000 {
    return this.codec === 'opus' ? 16000 : 8000;
  }

  static async call(
    sip: SipPeer,
    target: { user: string; port: number; from: string },
    hz: number,
    codec: TonePhoneCodec = 'pcmu',
  ): Promise<TonePhone> {
    const rtp = await RtpPeer.open(0x1000 + hz);
    const phone = new TonePhone(rtp, hz, codec);
    const media =
      codec === 'opus'
        ? `m=audio ${rtp.port} RTP/AVP ${OPUS_PT}\r\na=rtpmap:${OPUS_PT} opus/48000/2\r\n`
        : `m=audio ${rtp.port} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\n` +
          'a=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\n';
    const sdp =
      'v=0\r\no=phone 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n' +
      `${media}a=sendrecv\r\n`;
    const outcome = await sip.uac.invite({
      target: `sip:${target.user}@127.0.0.1:${target.port}`,
      from: `sip:${target.from}@127.0.0.1`,
      sdp,
    }).outcome;
    if (!outcome.answered) throw new Error(`the call was not answered: ${outcome.failure.kind}`);
    phone.dialog = outcome.dialog;
    outcome.dialog.delegate = {
      onTerminated: (end) => {
        if (end.kind === 'bye' && end.by === 'remote') phone.byeReceived = true;
        phone.stopTone();
      },
    };
    const port = Number(/m=audio (\d+)/.exec(outcome.sdp ?? '')?.[1]);
    phone.startTone(port);
    return phone;
  }

  /** The gateway's RTP port for this call. */
  port = 0;

  /**
   * What the phone heard (decoded at its rate), packets received after `fromMs` since it
   * opened.
   */
  heard(fromMs = 0): Int16Array {
    const opus = this.codec === 'opus' ? new OpusDecoder(16000) : null;
    const frames = this.rtp.received
      .filter((p) => p.payloadType === (opus ? OPUS_PT : 0) && p.at >= fromMs)
      .map((p) => (opus ? opus.decode(p.payload) : muLawDecode(p.payload)));
    const out = new Int16Array(frames.reduce((n, f) => n + f.length, 0));
    let at = 0;
    for (const frame of frames) {
      out.set(frame, at);
      at += frame.length;
    }
    return out;
  }

  /** Ms since the phone's RTP opened (the clock `heard` counts in). */
  get now(): number {
    return Date.now() - this.opened;
  }

  /**
   * Re-INVITEs the gateway (a PCMU phone) offering `formats` in that order (0 PCMU, 8 PCMA,
   * 101 telephone-event), as a refresh or a hold would; the answer's SDP.
   */
  async reoffer(formats: string): Promise<string> {
    const sdp =
      'v=0\r\no=phone 1 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n' +
      `m=audio ${this.rtp.port} RTP/AVP ${formats}\r\na=rtpmap:0 PCMU/8000\r\n` +
      'a=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\n' +
      'a=sendrecv\r\n';
    const response = await this.dialog!.reinvite(sdp);
    if (response.status !== 200) throw new Error(`the re-INVITE got ${response.status}`);
    return response.body.toString();
  }

  async pressKey(event: number): Promise<void> {
    await this.rtp.pressKey(this.port, event);
  }

  async hangup(): Promise<void> {
    this.stopTone();
    if (this.dialog && !this.byeReceived) await this.dialog.bye().catch(() => null);
  }

  async close(): Promise<void> {
    this.stopTone();
    await this.rtp.close();
  }

  private startTone(port: number): void {
    this.port = port;
    const frameSamples = this.rate / 50;
    const pcm = tone(this.rate, this.hz, 1, 8000);
    const opus = this.codec === 'opus' ? new OpusEncoder(16000) : null;
    let at = 0;
    let wasSilent = false;
    this.timer = setInterval(() => {
      const frame = this.silent
        ? new Int16Array(frameSamples)
        : pcm.subarray(at, at + frameSamples);
      at = (at + frameSamples) % pcm.length;
      if (wasSilent && !this.silent) this.toneSentAt = Date.now();
      wasSilent = this.silent;
      if (opus) this.rtp.send(port, opus.encode(frame), { payloadType: OPUS_PT, samples: 960 });
      else this.rtp.send(port, muLawEncode(frame), { payloadType: 0, samples: 160 });
    }, 20);
  }

  private stopTone(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
