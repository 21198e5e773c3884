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
  /** The timestamp of the segment now running: a long event goes on in new segments. */
  segment: number;
  /** Duration of the segments before this one, and of this one so far. */
  before: number;
  duration: number;
  volume: number;
}

/**
 * A segment's duration this near the 16-bit field's end has run out of it: RFC 4733 2.5.2.3
 * goes on with a new segment, timestamped where this one ends (at a 48 kHz clock, after 1.4 s).
 */
const SEGMENT_FULL = 0xffff - 0x0fff;
/** How far from the end of the segment before a continuation's timestamp may fall. */
const SEGMENT_SLACK = 0x0fff;

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
    if (this.open !== null && this.open.segment !== timestamp) {
      if (this.continues(this.open, digit, timestamp, packet.marker)) {
        // RFC 4733 2.5.2.3: the same key, held past what one segment's duration can say.
        this.finished.push(this.open.segment);
        this.open.before += this.open.duration;
        this.open.segment = timestamp;
        this.open.duration = 0;
      } else {
        // RFC 4733 2.5.2.2: a new event (new timestamp) ends the one before, even unannounced.
        reports.push(this.close(false));
      }
    }
    const open = this.open ?? {
      timestamp,
      digit,
      segment: timestamp,
      before: 0,
      duration: 0,
      volume: event.volume,
    };
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

  /** Whether a packet of a new timestamp is the next segment of the open event. */
  private continues(open: OpenEvent, digit: DtmfDigit, timestamp: number, marker: boolean) {
    if (marker || digit !== open.digit || open.duration < SEGMENT_FULL) return false;
    const offset = (timestamp - open.segment) >>> 0;
    return Math.abs(offset - open.duration) <= SEGMENT_SLACK;
  }

  private close(ended: boolean): ReceivedDigit {
    const open = this.open;
    if (open === null) throw new Error('no open telephone-event to close');
    this.open = null;
    this.finished.push(open.segment);
    while (this.finished.length > FINISHED_MEMORY) this.finished.shift();
    const duration = open.before + open.duration;
    return {
      digit: open.digit,
      timestamp: open.timestamp,
      duration,
      durationMs: (duration * 1000) / this.clockRate,
      volume: open.volume,
      ended,
    };
  }
}
