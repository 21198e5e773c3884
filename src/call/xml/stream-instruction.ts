import { STREAM_AUDIO_TRACKS, STREAM_CONTENT_TYPES } from './answer-document.js';
import type { StreamInstruction } from './answer-document.js';
import {
  ANSWER_XML_DEFAULTS,
  ANSWER_XML_RANGES,
  STREAM_EXTRA_HEADERS_MAX_BYTES,
} from './answer-xml-defaults.js';
import { AnswerXmlError } from './answer-xml-error.js';
import { ElementReader, WEBSOCKET_PROTOCOLS } from './element-reader.js';
import type { XmlElement } from './xml-tree.js';

export function readStream(element: XmlElement): StreamInstruction {
  const defaults = ANSWER_XML_DEFAULTS.Stream;
  const reader = new ElementReader(element, [
    'bidirectional',
    'audioTrack',
    'streamTimeout',
    'statusCallbackUrl',
    'statusCallbackMethod',
    'contentType',
    'extraHeaders',
    'keepCallAlive',
    'noiseCancellation',
    'noiseCancellationLevel',
  ]);
  const url = reader.urlText(WEBSOCKET_PROTOCOLS, 'a ws or wss URL');
  const bidirectional = reader.boolean('bidirectional', defaults.bidirectional);
  const audioTrack = reader.oneOf('audioTrack', STREAM_AUDIO_TRACKS, defaults.audioTrack);
  // Voice document: when bidirectional is true, audio_track cannot be outbound or both.
  if (bidirectional && audioTrack !== 'inbound') {
    throw new AnswerXmlError(
      'Stream',
      `audioTrack must be inbound when bidirectional is "true", got "${audioTrack}"`,
      'audioTrack',
    );
  }
  const extraHeadersText = reader.string('extraHeaders') ?? '';
  const extraHeadersBytes = Buffer.byteLength(extraHeadersText, 'utf8');
  if (extraHeadersBytes > STREAM_EXTRA_HEADERS_MAX_BYTES) {
    throw new AnswerXmlError(
      'Stream',
      `extraHeaders must be at most ${STREAM_EXTRA_HEADERS_MAX_BYTES} bytes, got ${extraHeadersBytes}`,
      'extraHeaders',
    );
  }
  return {
    kind: 'Stream',
    url,
    bidirectional,
    audioTrack,
    streamTimeout: reader.integer(
      'streamTimeout',
      defaults.streamTimeout,
      ANSWER_XML_RANGES.streamTimeout,
    ),
    statusCallbackUrl: reader.url('statusCallbackUrl'),
    statusCallbackMethod: reader.method('statusCallbackMethod', defaults.statusCallbackMethod),
    contentType: reader.oneOf('contentType', STREAM_CONTENT_TYPES, defaults.contentType),
    extraHeaders: reader.headerList('extraHeaders'),
    keepCallAlive: reader.boolean('keepCallAlive', defaults.keepCallAlive),
    noiseCancellation: reader.boolean('noiseCancellation', defaults.noiseCancellation),
    noiseCancellationLevel: reader.integer(
      'noiseCancellationLevel',
      defaults.noiseCancellationLevel,
      ANSWER_XML_RANGES.noiseCancellationLevel,
    ),
  };
}
