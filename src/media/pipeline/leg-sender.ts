import type { OutgoingEventPacket } from '../dtmf/dtmf-sender.js';
import type { RtcpPacket } from '../rtp/rtcp-packet.js';
import type { RtpPacket } from '../rtp/rtp-packet.js';
import type { RtpSession } from '../rtp/rtp-session.js';
import { rtpUnits, type AudioFormat, type PayloadCodec } from './audio-format.js';

/**
 * What one leg puts on the wire: its frames encoded in the send codec, RFC 4733 event packets,
 * and packets relayed undecoded from another leg, with the RTP marker and timestamps each
 * needs; and what the peer's RTCP reports say of them, handed to the codec.
 */
export class LegSender {
  /** Whether the next packet starts a talkspurt (RFC 3551 4.1: the marker bit). */
  marker = true;
  /** Relayed packets in a format this leg did not negotiate. */
  relayDropped = 0;
  private codec: PayloadCodec;
  private callRate: number;
  /** The frame that means nothing plays (PlayoutQueue.silence): encoded once per codec. */
  private silence: Int16Array;
  private silencePayload: { codec: PayloadCodec; payload: Uint8Array } | null = null;
  /** Whether the last frame sent was silence. */
  private sentSilence = true;
  private eventTimestamp = 0;
  private relaySource: { ssrc: number; offset: number } | null = null;

  constructor(
    private readonly rtp: RtpSession,
    send: { codec: PayloadCodec; rate: number; silence: Int16Array },
  ) {
    this.codec = send.codec;
    this.callRate = send.rate;
    this.silence = send.silence;
  }

  /** The codec after offer/answer settled or changed it. */
  setCodec(codec: PayloadCodec): void {
    this.codec = codec;
  }

  /** The call moved to another rate: its frames, and the frame of silence, are new. */
  setRate(rate: number, silence: Int16Array): void {
    this.callRate = rate;
    this.silence = silence;
    this.silencePayload = null;
  }

  /** `band`: the highest frequency the frame holds, null when not known. */
  audio(pcm: Int16Array, band: number | null): void {
    // After silence, a change of band is heard by no one: the encoder may start afresh.
    this.codec.audioBand?.(band, this.marker || this.sentSilence);
    this.sentSilence = pcm === this.silence;
    this.rtp.send(this.encode(pcm), {
      payloadType: this.codec.format.payloadType,
      // RFC 7587 4.1: Opus timestamps count 48 kHz whatever rate the audio is coded at.
      samples: (pcm.length * this.codec.clockRate) / this.callRate,
      marker: this.marker,
    });
    this.marker = false;
  }

  /** An RFC 4733 packet; every packet of one event carries its first one's timestamp. */
  event(packet: OutgoingEventPacket, payloadType: number): void {
    if (packet.marker) this.eventTimestamp = this.rtp.sender.timestamp;
    this.rtp.send(packet.payload, {
      payloadType,
      samples: this.codec.clockRate / 50,
      marker: packet.marker,
      timestamp: this.eventTimestamp,
    });
    // The audio after an event starts a new talkspurt.
    this.marker = true;
  }

  /**
   * A packet relayed from another leg (`from` its formats), in this leg's payload type for
   * its encoding (`own` this leg's formats); dropped and counted when this leg has none.
   */
  relayed(packet: RtpPacket, from: readonly AudioFormat[], own: readonly AudioFormat[]): void {
    const encoding = from.find((f) => f.payloadType === packet.payloadType)?.encoding;
    const format = own.find((f) => f.encoding === encoding);
    if (!format) {
      this.relayDropped++;
      return;
    }
    // The far side's timing is kept: its timestamps are shifted onto ours, gaps and all.
    if (this.relaySource?.ssrc !== packet.ssrc) {
      this.relaySource = {
        ssrc: packet.ssrc,
        offset: this.rtp.sender.timestamp - packet.timestamp,
      };
    }
    this.rtp.send(packet.payload, {
      payloadType: format.payloadType,
      samples: rtpUnits(format, packet.payload),
      marker: packet.marker || this.marker,
      timestamp: (packet.timestamp + this.relaySource.offset) >>> 0,
    });
    this.marker = false;
  }

  /** RFC 3550 6.4: what the peer's reports say of this side's packets tunes the encoder. */
  reportsReceived(packets: readonly RtcpPacket[]): void {
    const ssrc = this.rtp.sender.ssrc;
    for (const packet of packets) {
      if (packet.type !== 'sr' && packet.type !== 'rr') continue;
      const about = packet.reports.find((report) => report.ssrc === ssrc);
      if (about) this.codec.lossReported?.(about.fractionLost);
    }
  }

  /**
   * Encodes a frame; silence, most of what an idle leg sends, is encoded once per codec,
   * unless the codec holds state between frames (Opus).
   */
  private encode(pcm: Int16Array): Uint8Array {
    if (pcm !== this.silence || this.codec.sequential) return this.codec.encode(pcm);
    if (this.silencePayload?.codec !== this.codec) {
      // A copy of its own: an encoded frame is a slice of a shared pool, not to be kept.
      const payload = new Uint8Array(this.codec.encode(pcm));
      this.silencePayload = { codec: this.codec, payload };
    }
    return this.silencePayload.payload;
  }
}
