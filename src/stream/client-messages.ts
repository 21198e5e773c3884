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
    return { error: `streamId ${String(message.streamId)} is not this stream's (${streamId})` };
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
        error: `Expected an event of playAudio, checkpoint, clearAudio or sendDTMF but received ${JSON.stringify(message.event)}`,
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
      error: `playAudio sampleRate must be 8000, 16000 or 24000 (a number or a numeric string) but received ${JSON.stringify(sampleRate)}`,
    };
  }
  let encoding: StreamAudioFormat['encoding'];
  if (contentType === 'audio/x-l16') encoding = 'l16';
  else if (contentType === 'audio/x-mulaw') encoding = 'mulaw';
  else {
    return {
      error: `playAudio contentType must be audio/x-l16 or audio/x-mulaw but received ${JSON.stringify(contentType)}`,
    };
  }
  if (encoding === 'mulaw' && rate !== 8000) {
    return { error: `playAudio audio/x-mulaw is 8000 Hz only but received ${rate}` };
  }
  if (typeof payload !== 'string' || payload === '' || !BASE64.test(payload)) {
    return { error: 'playAudio payload must be non-empty base64' };
  }
  return {
    message: {
      event: 'playAudio',
      payload: Buffer.from(payload, 'base64'),
      format: { encoding, rate: rate as StreamAudioFormat['rate'] },
    },
  };
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
