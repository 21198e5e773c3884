import { DtmfParseError } from './dtmf-parse-error.js';

/**
 * The payload of an RFC 4733 telephone-event packet (section 2.3):
 *
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |     event     |E|R| volume    |          duration             |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */
export interface TelephoneEvent {
  /** 0-255; 0-15 are the DTMF digits. */
  readonly event: number;
  /** The E bit: this packet ends the event. */
  readonly end: boolean;
  /** Power level in -dBm0, 0-63. */
  readonly volume: number;
  /** Length of the event so far, in RTP timestamp units. */
  readonly duration: number;
}

export const TELEPHONE_EVENT_LENGTH = 4;

function checkRange(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(
      `Expected an integer between 0 and ${max} for ${name} but received ${value}`,
    );
  }
}

export function encodeTelephoneEvent(event: TelephoneEvent): Uint8Array {
  checkRange('event', event.event, 255);
  checkRange('volume', event.volume, 63);
  checkRange('duration', event.duration, 0xffff);
  const bytes = new Uint8Array(TELEPHONE_EVENT_LENGTH);
  bytes[0] = event.event;
  // RFC 4733 2.3: the R bit is reserved, sent as 0.
  bytes[1] = (event.end ? 0x80 : 0) | event.volume;
  bytes[2] = event.duration >> 8;
  bytes[3] = event.duration & 0xff;
  return bytes;
}

export function decodeTelephoneEvent(payload: Uint8Array): TelephoneEvent {
  // RFC 4733 2.5.2.3: a packet may carry several events (redundancy); the first is current.
  if (payload.length < TELEPHONE_EVENT_LENGTH) {
    throw new DtmfParseError(
      `telephone-event payload is ${payload.length} bytes; it needs at least ${TELEPHONE_EVENT_LENGTH}`,
    );
  }
  const second = payload[1] ?? 0;
  return {
    event: payload[0] ?? 0,
    end: (second & 0x80) !== 0,
    volume: second & 0x3f,
    duration: ((payload[2] ?? 0) << 8) | (payload[3] ?? 0),
  };
}
