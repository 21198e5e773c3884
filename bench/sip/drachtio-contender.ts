import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import SipMessage from 'drachtio-srf/lib/sip-parser/message.js';
import type { ParserContender } from './parser-contender.js';

interface ParamHeader {
  params: Record<string, string | undefined>;
}

function read(bytes: Buffer): ReturnType<ParserContender['read']> {
  // DrachtioAgent builds exactly this from each message string drachtio-server forwards.
  const message = new SipMessage(bytes.toString('utf8'));
  const vias = message.getParsedHeader('via') as ParamHeader[];
  const from = message.getParsedHeader('from') as ParamHeader;
  const to = message.getParsedHeader('to') as ParamHeader;
  const cseq = message.getParsedHeader('cseq') as { seq: number; method: string };
  const callId = message.get('call-id');
  const topVia = vias[0];
  if (topVia === undefined || callId === undefined) throw new Error('no Via or no Call-ID');
  const uri = message.method === undefined ? undefined : SipMessage.parseUri(message.uri ?? '');
  return {
    method: message.method ?? null,
    status: message.status ?? null,
    requestUser: uri?.user ?? null,
    requestHost: uri?.host ?? null,
    topViaBranch: topVia.params.branch ?? '',
    fromTag: from.params.tag ?? '',
    toTag: to.params.tag ?? null,
    callId,
    cseqSeq: cseq.seq,
    cseqMethod: cseq.method,
    bodyLength: message.body?.length ?? 0,
  };
}

function version(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('drachtio-srf/package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

export const DRACHTIO_CONTENDER: ParserContender = {
  id: 'drachtio',
  label: 'drachtio-srf',
  version: version(),
  entry: "new SipMessage(string) from 'drachtio-srf/lib/sip-parser/message.js'",
  eagerness:
    'eager: splits head from body and the head into lines, start line by regex, each header ' +
    'name normalised and its value kept as a string (same-name headers joined by commas); ' +
    'lazy: getParsedHeader() regex-parses a header on every call, without caching, and the ' +
    'request-URI only through SipMessage.parseUri',
  read,
};
