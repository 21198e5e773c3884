import type { RawData } from 'ws';
import type { StreamAudioFormat } from '../media/pipeline/stream-audio.js';

/** What a server may send on a stream (wire-compat.md), read and checked. */
export type ClientMessage =
  | { event: 'playAudio'; payload: Buffer; format: StreamAudioFormat }
  | { event: 'checkpoint'; name: string }
  | { event: 'clearAudio' }
  | { event: 'sendDTMF'; digits: string };

const RATES = new Set([8000, 16000, 24000]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Line breaks and spaces, as MIME-style base64 encoders write them (every 76 characters). */
const BASE64_SPACING = /[\r\n\t ]/g;
/** The most of a value an error quotes back: a megabyte of it would outgrow the send budget. */
const QUOTED_CHARS = 100;

/** Text as an error shows it: cut short past QUOTED_CHARS, saying how long it was. */
function clipped(text: string): string {
  return text.length > QUOTED_CHARS
    ? `${text.slice(0, QUOTED_CHARS)}… (${text.length} characters)`
    : text;
}

/** A value as an error quotes it: JSON, cut short past QUOTED_CHARS. */
const quoted = (value: unknown): string => clipped(JSON.stringify(value) ?? String(value));

/**
 * Reads one frame from the server: a JSON text message with a known event and valid fields,
 * or an error that names what is wrong. A streamId, when present, must be this stream's.
 */
export function readClientMessage(
  data: RawData,
  isBinary: boolean,
  streamId: string,
): { message: ClientMessage } | { error: string } {
  if (isBinary) return { error: 'Expected JSON text frames but received a binary frame' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawText(data));
  } catch {
    return { error: 'Expected a JSON message but the frame does not parse' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { error: 'Expected a JSON object with an event' };
  }
  const message = parsed as Record<string, unknown>;
  if ('streamId' in message && message.streamId !== streamId) {
    return {
      error: `streamId ${clipped(String(message.streamId))} is not this stream's (${streamId})`,
    };
  }
  switch (message.event) {
    case 'playAudio':
      return readPlayAudio(message.media);
    case 'checkpoint':
      if (typeof message.name !== 'string' || message.name === '') {
        return { error: 'checkpoint needs a name (a non-empty string)' };
      }
      return { message: { event: 'checkpoint', name: message.name } };
    case 'clearAudio':
      return { message: { event: 'clearAudio' } };
    case 'sendDTMF':
      if (typeof message.dtmf !== 'string' || message.dtmf === '') {
        return { error: 'sendDTMF needs dtmf, a string of digits' };
      }
      return { message: { event: 'sendDTMF', digits: message.dtmf } };
    default:
      return {
        error: `Expected an event of playAudio, checkpoint, clearAudio or sendDTMF but received ${quoted(message.event)}`,
      };
  }
}

function readPlayAudio(media: unknown): { message: ClientMessage } | { error: string } {
  if (typeof media !== 'object' || media === null) {
    return { error: 'playAudio needs media: contentType, sampleRate and payload' };
  }
  const { contentType, sampleRate, payload } = media as Record<string, unknown>;
  const rate =
    typeof sampleRate === 'string' && /^\d+$/.test(sampleRate) ? Number(sampleRate) : sampleRate;
  if (typeof rate !== 'number' || !RATES.has(rate)) {
    return {
      error: `playAudio sampleRate must be 8000, 16000 or 24000 (a number or a numeric string) but received ${quoted(sampleRate)}`,
    };
  }
  let encoding: StreamAudioFormat['encoding'];
  if (contentType === 'audio/x-l16') encoding = 'l16';
  else if (contentType === 'audio/x-mulaw') encoding = 'mulaw';
  else {
    return {
      error: `playAudio contentType must be audio/x-l16 or audio/x-mulaw but received ${quoted(contentType)}`,
    };
  }
  if (encoding === 'mulaw' && rate !== 8000) {
    return { error: `playAudio audio/x-mulaw is 8000 Hz only but received ${rate}` };
  }
  if (typeof payload !== 'string' || payload === '') {
    return { error: 'playAudio payload must be non-empty base64' };
  }
  // Base64 as MIME encoders write it (Python's encodebytes, Java's MIME encoder) is taken too.
  const base64 = BASE64.test(payload) ? payload : payload.replace(BASE64_SPACING, '');
  if (base64 === '' || !BASE64.test(base64)) {
    const bad = /[^A-Za-z0-9+/=\r\n\t ]/.exec(payload);
    return {
      error: bad
        ? `playAudio payload must be base64 but holds ${quoted(bad[0])} at ${bad.index}`
        : 'playAudio payload must be non-empty base64 (its = padding only at the end)',
    };
  }
  return {
    message: {
      event: 'playAudio',
      payload: Buffer.from(base64, 'base64'),
      format: { encoding, rate: rate as StreamAudioFormat['rate'] },
    },
  };
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
