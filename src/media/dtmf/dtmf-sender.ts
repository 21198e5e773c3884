import { eventOfDigit, type DtmfDigit } from './dtmf-digit.js';
import { encodeTelephoneEvent } from './telephone-event.js';

export interface DigitSendOptions {
  /** Tone length in ms; 100 by default. */
  readonly durationMs?: number;
  /** Power level in -dBm0 (0-63); 10 by default. */
  readonly volume?: number;
  readonly clockRate?: number;
  /** Interval between packets in ms; 20 by default. */
  readonly intervalMs?: number;
}

/** One RTP packet to send; every packet of the event uses the event's start timestamp. */
export interface OutgoingEventPacket {
  /** When to send it, in ms after the first packet. */
  readonly atMs: number;
  readonly marker: boolean;
  readonly end: boolean;
  /** The duration field, in RTP timestamp units. */
  readonly duration: number;
  readonly payload: Uint8Array;
}

/** RFC 4733 2.5.1.4: the final packet SHOULD be sent three times. */
const END_PACKETS = 3;

function checkPositive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`Expected a positive number for ${name} but received ${value}`);
  }
}

/**
 * The packets that send one digit (RFC 4733 2.5.1): the first with the marker bit, then an
 * update every interval with the duration so far, then three end packets with the final
 * duration.
 */
export function digitPackets(
  digit: DtmfDigit,
  options: DigitSendOptions = {},
): OutgoingEventPacket[] {
  const durationMs = options.durationMs ?? 100;
  const volume = options.volume ?? 10;
  const clockRate = options.clockRate ?? 8000;
  const intervalMs = options.intervalMs ?? 20;
  checkPositive('durationMs', durationMs);
  checkPositive('clockRate', clockRate);
  checkPositive('intervalMs', intervalMs);
  const total = Math.round((durationMs * clockRate) / 1000);
  if (total > 0xffff) {
    throw new RangeError(
      `Expected a durationMs of at most ${Math.floor((0xffff * 1000) / clockRate)} but received ${durationMs}`,
    );
  }
  const step = Math.round((intervalMs * clockRate) / 1000);
  const event = eventOfDigit(digit);
  const packets: OutgoingEventPacket[] = [];
  const add = (index: number, duration: number, end: boolean): void => {
    packets.push({
      atMs: index * intervalMs,
      marker: index === 0,
      end,
      duration,
      payload: encodeTelephoneEvent({ event, end, volume, duration }),
    });
  };
  const updates = Math.max(1, Math.ceil(total / step) - 1);
  for (let index = 0; index < updates; index++)
    add(index, Math.min((index + 1) * step, total), false);
  for (let repeat = 0; repeat < END_PACKETS; repeat++) add(updates + repeat, total, true);
  return packets;
}
