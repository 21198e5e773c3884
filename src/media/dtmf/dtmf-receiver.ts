import { digitOfEvent, type DtmfDigit } from './dtmf-digit.js';
import { decodeTelephoneEvent } from './telephone-event.js';

/** An RTP packet of the telephone-event payload type, as the RTP layer hands it over. */
export interface TelephoneEventPacket {
  /** RTP timestamp: the same for every packet of one event (RFC 4733 2.5.1.1). */
  readonly timestamp: number;
  readonly marker: boolean;
  readonly payload: Uint8Array;
}

/** One key press, reported once however many packets carried it. */
export interface ReceivedDigit {
  readonly digit: DtmfDigit;
  /** RTP timestamp of the event's start. */
  readonly timestamp: number;
  /** Duration in RTP timestamp units, and in ms at the stream's clock rate. */
  readonly duration: number;
  readonly durationMs: number;
  readonly volume: number;
  /** False when the event was closed by the next one, its end packets all lost. */
  readonly ended: boolean;
}

interface OpenEvent {
  readonly timestamp: number;
  readonly digit: DtmfDigit;
  duration: number;
  volume: number;
}

/** How many finished events are remembered to drop their repeated end packets. */
const FINISHED_MEMORY = 16;

/**
 * Turns a stream of RFC 4733 packets into one digit per event. Events are told apart by their
 * RTP timestamp, so a lost start packet, repeated updates and the three end packets
 * (RFC 4733 2.5.1.4) all fold into one report, given when the event ends.
 */
export class DtmfReceiver {
  private open: OpenEvent | null = null;
  private readonly finished: number[] = [];

  constructor(private readonly clockRate = 8000) {
    if (!Number.isInteger(clockRate) || clockRate <= 0) {
      throw new RangeError(`Expected a positive integer for clockRate but received ${clockRate}`);
    }
  }

  process(packet: TelephoneEventPacket): ReceivedDigit[] {
    const event = decodeTelephoneEvent(packet.payload);
    const digit = digitOfEvent(event.event);
    const timestamp = packet.timestamp >>> 0;
    if (digit === null || this.finished.includes(timestamp)) return [];
    const reports: ReceivedDigit[] = [];
    if (this.open !== null && this.open.timestamp !== timestamp) {
      // RFC 4733 2.5.2.2: a new event (new timestamp) ends the one before, even unannounced.
      reports.push(this.close(false));
    }
    const open = this.open ?? { timestamp, digit, duration: 0, volume: event.volume };
    open.duration = Math.max(open.duration, event.duration);
    open.volume = event.volume;
    this.open = open;
    if (event.end) reports.push(this.close(true));
    return reports;
  }

  /** Reports the event still open, when the stream stops without its end packets. */
  flush(): ReceivedDigit[] {
    return this.open === null ? [] : [this.close(false)];
  }

  private close(ended: boolean): ReceivedDigit {
    const open = this.open;
    if (open === null) throw new Error('no open telephone-event to close');
    this.open = null;
    this.finished.push(open.timestamp);
    if (this.finished.length > FINISHED_MEMORY) this.finished.shift();
    return {
      digit: open.digit,
      timestamp: open.timestamp,
      duration: open.duration,
      durationMs: (open.duration * 1000) / this.clockRate,
      volume: open.volume,
      ended,
    };
  }
}
