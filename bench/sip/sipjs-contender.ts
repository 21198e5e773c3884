import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  IncomingRequestMessage,
  LoggerFactory,
  Parser,
  type IncomingResponseMessage,
} from 'sip.js/lib/core/index.js';
import type { ParserContender } from './parser-contender.js';

const loggers = new LoggerFactory();
loggers.builtinEnabled = false;
const logger = loggers.getLogger('sip.Parser');

function read(bytes: Buffer): ReturnType<ParserContender['read']> {
  // sip.js's transports hand the user agent a string (WebSocket text frames), so decoding is
  // part of its path; UserAgent.onTransportMessage then calls exactly this.
  const message = Parser.parseMessage(bytes.toString('utf8'), logger);
  if (message === undefined) throw new Error('Parser.parseMessage returned undefined');
  const request = message instanceof IncomingRequestMessage ? message : null;
  const cseq = message.parseHeader('cseq') as { value: number; method: string } | undefined;
  if (cseq === undefined) throw new Error('no CSeq');
  return {
    method: request ? request.method : null,
    status: request ? null : ((message as IncomingResponseMessage).statusCode ?? null),
    requestUser: request?.ruri?.user ?? null,
    requestHost: request?.ruri?.host ?? null,
    topViaBranch: message.viaBranch,
    fromTag: message.fromTag,
    toTag: message.toTag ?? null,
    callId: message.callId,
    cseqSeq: message.cseq,
    cseqMethod: cseq.method,
    bodyLength: message.body.length,
  };
}

function version(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('sip.js/package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

export const SIPJS_CONTENDER: ParserContender = {
  id: 'sipjs',
  label: 'sip.js',
  version: version(),
  entry: "Parser.parseMessage(string, logger) from 'sip.js/lib/core'",
  eagerness:
    'eager: start line and request-URI through its PEG grammar, and the first Via, From, To, ' +
    'Call-ID, CSeq, Contact, Record-Route, Content-Length, Content-Type and Max-Forwards each ' +
    'through the grammar; other headers and further Vias kept as raw strings; body sliced',
  read,
};
