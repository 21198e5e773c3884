import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isSipUri, parseMessage, SipRequest } from '../../src/sip/message/index.js';
import type { ParserContender } from './parser-contender.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function read(bytes: Buffer): ReturnType<ParserContender['read']> {
  // The transports hand the parser the datagram or the framed stream message as it arrived.
  const message = parseMessage(bytes);
  const request = message instanceof SipRequest ? message : null;
  const uri = request?.requestUri();
  // A UAS matches transactions on the top Via alone; topVia() parses only that row.
  const topVia = message.topVia();
  const fromTag = message.from().tag;
  if (topVia === undefined || topVia.branch === null || fromTag === null) {
    throw new Error('no Via branch or no From tag');
  }
  const cseq = message.cseq();
  return {
    method: request ? request.method : null,
    status: message instanceof SipRequest ? null : message.status,
    requestUser: uri && isSipUri(uri) ? uri.user : null,
    requestHost: uri && isSipUri(uri) ? uri.host : null,
    topViaBranch: topVia.branch,
    fromTag,
    toTag: message.to().tag,
    callId: message.callId(),
    cseqSeq: cseq.seq,
    cseqMethod: cseq.method,
    bodyLength: message.body.length,
  };
}

/** The last commit that touched the parser, marked when the working tree differs from it. */
function version(): string {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  try {
    const commit = git('log', '-1', '--format=%h', '--', 'src/sip/message');
    const modified = git('status', '--porcelain', '--', 'src/sip/message').length > 0;
    return `${commit || 'uncommitted'}${modified ? ' with uncommitted changes' : ''}`;
  } catch {
    return 'unknown';
  }
}

export const VOXGATE_CONTENDER: ParserContender = {
  id: 'voxgate',
  label: 'voxgate',
  version: version(),
  entry: "parseMessage(Buffer) from 'src/sip/message'",
  eagerness:
    'eager: start line, the rows of the head found and their names recognised in the ' +
    'octets, Content-Length framing and the body as a Buffer slice; lazy: each header value ' +
    'is cut out of the octets when first read, and each typed accessor (topVia(), from(), ' +
    'to(), callId(), cseq(), requestUri()) parses its header on first use and caches it; ' +
    'topVia() parses only the first Via row',
  read,
};
