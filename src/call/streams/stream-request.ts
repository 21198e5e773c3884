import { isAbsoluteUrl, WEBSOCKET_PROTOCOLS } from '../../core/absolute-url.js';
import { readHeaderList } from '../../core/header-list.js';
import type { StreamTrack } from '../../state/records.js';

/** The content types a stream may carry (voice document, Start an audio stream). */
export const STREAM_CONTENT_TYPES = [
  'audio/x-l16;rate=8000',
  'audio/x-l16;rate=16000',
  'audio/x-l16;rate=24000',
  'audio/x-mulaw;rate=8000',
] as const;

export type StreamContentType = (typeof STREAM_CONTENT_TYPES)[number];

/**
 * stream_timeout (and the XML's streamTimeout) is at most a day, the default: a longer one would
 * also overflow the timer that keeps it (2^31 ms).
 */
export const STREAM_TIMEOUT_MAX_SECONDS = 86_400;

export const STREAM_DEFAULTS = {
  bidirectional: false,
  audioTrack: 'inbound' as StreamTrack,
  streamTimeout: STREAM_TIMEOUT_MAX_SECONDS,
  contentType: 'audio/x-l16;rate=8000' as StreamContentType,
  statusCallbackMethod: 'POST' as 'GET' | 'POST',
  noiseCancellation: false,
  noiseCancellationLevel: 85,
};

/** extra_headers (and the XML's extraHeaders) may be at most this many bytes. */
export const EXTRA_HEADERS_MAX_BYTES = 512;

/**
 * A validated request to fork a call's audio to a WebSocket server, from REST
 * (`POST Call/{uuid}/Stream/`) or from the answer XML's `<Stream>`. Rules the API and the XML
 * both check: service_url is ws: or wss:, a bidirectional stream carries the inbound track
 * only, the timeout is a positive whole number of seconds, the noise level is 60-100.
 */
export interface StreamRequest {
  serviceUrl: string;
  bidirectional: boolean;
  audioTrack: StreamTrack;
  /** Seconds. */
  streamTimeout: number;
  contentType: StreamContentType;
  statusCallbackUrl: string | null;
  statusCallbackMethod: 'GET' | 'POST';
  /** `key1=val1,key2=val2`, sent as is on every event ('' when none). */
  extraHeaders: string;
  noiseCancellation: boolean;
  noiseCancellationLevel: number;
}

/** What is wrong with a stream request, or null; the message names the rule. */
export function streamRequestProblem(request: StreamRequest): string | null {
  if (!isAbsoluteUrl(request.serviceUrl, WEBSOCKET_PROTOCOLS)) {
    return `service_url must be a ws:// or wss:// URL but received ${request.serviceUrl}`;
  }
  if (request.bidirectional && request.audioTrack !== 'inbound') {
    return `audio_track must be inbound when bidirectional is true but received ${request.audioTrack}`;
  }
  if (!Number.isInteger(request.streamTimeout) || request.streamTimeout < 1) {
    return `stream_timeout must be a whole number of seconds of at least 1 but received ${request.streamTimeout}`;
  }
  if (!(STREAM_CONTENT_TYPES as readonly string[]).includes(request.contentType)) {
    return `content_type must be one of ${STREAM_CONTENT_TYPES.join(', ')} but received ${request.contentType}`;
  }
  if (Buffer.byteLength(request.extraHeaders) > EXTRA_HEADERS_MAX_BYTES) {
    return `extra_headers must be at most ${EXTRA_HEADERS_MAX_BYTES} bytes`;
  }
  const headers = readHeaderList(request.extraHeaders);
  if (!headers.ok) {
    return headers.problem === 'repeated'
      ? `extra_headers must name each header once but names ${headers.name} twice`
      : `extra_headers must be name=value pairs separated by commas, with no spaces in a value, but received ${request.extraHeaders}`;
  }
  if (
    !Number.isInteger(request.noiseCancellationLevel) ||
    request.noiseCancellationLevel < 60 ||
    request.noiseCancellationLevel > 100
  ) {
    return `noise_cancellation_level must be a whole number from 60 to 100 but received ${request.noiseCancellationLevel}`;
  }
  return null;
}
