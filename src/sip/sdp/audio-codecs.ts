import type { PayloadFormat } from './session-description.js';

/** The audio codecs the media plane can carry. */
export type AudioCodec = 'PCMU' | 'PCMA' | 'L16/8000' | 'L16/16000';

interface CodecFormat {
  readonly encoding: string;
  readonly clockRate: number;
  /** The payload type voxgate puts in its own offers. */
  readonly offerPayloadType: number;
}

const CODEC_FORMATS: Readonly<Record<AudioCodec, CodecFormat>> = {
  PCMU: { encoding: 'PCMU', clockRate: 8000, offerPayloadType: 0 },
  PCMA: { encoding: 'PCMA', clockRate: 8000, offerPayloadType: 8 },
  // RFC 3551 4.5.11: L16 at 8 or 16 kHz has no static payload type; these are dynamic.
  'L16/8000': { encoding: 'L16', clockRate: 8000, offerPayloadType: 97 },
  'L16/16000': { encoding: 'L16', clockRate: 16000, offerPayloadType: 96 },
};

export const AUDIO_CODECS: readonly AudioCodec[] = ['PCMU', 'PCMA', 'L16/8000', 'L16/16000'];
export const DEFAULT_AUDIO_CODECS: readonly AudioCodec[] = ['PCMU', 'PCMA'];

export const TELEPHONE_EVENT = 'telephone-event';
/** Payload types of telephone-event in voxgate's offers, by clock rate. */
export const TELEPHONE_EVENT_PAYLOAD_TYPES: ReadonlyMap<number, number> = new Map([
  [8000, 101],
  [16000, 102],
]);
/** RFC 4733 3.2: the DTMF events 0-9, *, #, A-D and flash. */
export const SUPPORTED_EVENTS = { first: 0, last: 16 } as const;

export function codecPayload(codec: AudioCodec): PayloadFormat {
  const format = CODEC_FORMATS[codec];
  return {
    payloadType: format.offerPayloadType,
    encoding: format.encoding,
    clockRate: format.clockRate,
    channels: 1,
    fmtp: null,
  };
}

/** The codec a payload format carries, or null when voxgate cannot serve it. */
export function codecOf(payload: PayloadFormat): AudioCodec | null {
  if (payload.channels !== 1) return null;
  const encoding = payload.encoding.toUpperCase();
  for (const codec of AUDIO_CODECS) {
    const format = CODEC_FORMATS[codec];
    if (format.encoding === encoding && format.clockRate === payload.clockRate) return codec;
  }
  return null;
}

export function isTelephoneEvent(payload: PayloadFormat): boolean {
  return payload.encoding.toLowerCase() === TELEPHONE_EVENT;
}

/**
 * The events of an RFC 4733 fmtp list ("0-15,66") that voxgate also supports, written back in
 * the same form; null when none are left. A missing list means 0-15 (RFC 4733 2.4.1).
 */
export function commonEvents(fmtp: string | null): string | null {
  const wanted = new Set<number>();
  for (const part of (fmtp ?? '0-15').split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (match === null) continue;
    const low = Number(match[1]);
    const high = Math.min(Number(match[2] ?? match[1]), SUPPORTED_EVENTS.last);
    for (let event = Math.max(low, SUPPORTED_EVENTS.first); event <= high; event++) {
      wanted.add(event);
    }
  }
  const events = [...wanted].sort((a, b) => a - b);
  const ranges: string[] = [];
  let start = 0;
  for (let i = 1; i <= events.length; i++) {
    if (i === events.length || events[i] !== (events[i - 1] ?? 0) + 1) {
      const first = events[start];
      const last = events[i - 1];
      ranges.push(first === last ? `${first}` : `${first}-${last}`);
      start = i;
    }
  }
  return ranges.length === 0 ? null : ranges.join(',');
}
