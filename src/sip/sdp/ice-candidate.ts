import { isIP } from 'node:net';
import { SdpParseError } from './sdp-parse-error.js';

/** One a=candidate (RFC 8839 5.1). */
export interface SdpCandidate {
  readonly foundation: string;
  /** 1 for RTP; with rtcp-mux there is no other. */
  readonly component: number;
  /** `udp` or `tcp`, lower case. */
  readonly transport: string;
  readonly priority: number;
  /** An IP address, or an mDNS name (`<uuid>.local`) that a browser hides its address behind. */
  readonly address: string;
  readonly port: number;
  /** host, srflx, prflx or relay. */
  readonly type: string;
  readonly relatedAddress: string | null;
  readonly relatedPort: number | null;
  /** Name and value pairs after the type (generation, network-id, tcptype, ufrag...). */
  readonly extensions: ReadonlyMap<string, string>;
}

/*
 * RFC 8839 5.1:
 *   candidate-attribute = "candidate" ":" foundation SP component-id SP transport SP priority
 *                         SP connection-address SP port SP cand-type [SP rel-addr] [SP rel-port]
 *                         *(SP cand-extension)
 */
const CANDIDATE =
  /^candidate:([A-Za-z0-9+/]{1,32}) (\d{1,3}) (\S+) (\d{1,10}) (\S+) (\d{1,5}) typ (\S+)((?: \S+ \S+)*)$/;

export function parseCandidate(value: string, line: number | null): SdpCandidate {
  const match = CANDIDATE.exec(value.trimEnd());
  const component = Number(match?.[2]);
  const priority = Number(match?.[4]);
  const port = Number(match?.[6]);
  if (match === null || component < 1 || component > 256 || priority > 0xffffffff || port > 65535) {
    throw new SdpParseError(
      'a=candidate must be "<foundation> <component> <transport> <priority> <address> <port> typ <type> ..."',
      line,
    );
  }
  const extensions = new Map<string, string>();
  let relatedAddress: string | null = null;
  let relatedPort: number | null = null;
  const words = (match[8] ?? '').trim().split(' ').filter(Boolean);
  for (let i = 0; i + 1 < words.length; i += 2) {
    const [name, text] = [words[i]!, words[i + 1]!];
    if (name === 'raddr') relatedAddress = text;
    else if (name === 'rport') relatedPort = Number(text);
    else if (!extensions.has(name)) extensions.set(name, text);
  }
  return {
    foundation: match[1]!,
    component,
    transport: match[3]!.toLowerCase(),
    priority,
    address: match[5]!,
    port,
    type: match[7]!,
    relatedAddress,
    relatedPort,
    extensions,
  };
}

/** The value of an a=candidate line (without "a="). */
export function formatCandidate(candidate: SdpCandidate): string {
  const fields = [
    `candidate:${candidate.foundation}`,
    candidate.component,
    candidate.transport.toUpperCase(),
    candidate.priority,
    candidate.address,
    candidate.port,
    'typ',
    candidate.type,
  ];
  if (candidate.relatedAddress !== null) fields.push('raddr', candidate.relatedAddress);
  if (candidate.relatedPort !== null) fields.push('rport', candidate.relatedPort);
  for (const [name, value] of candidate.extensions) fields.push(name, value);
  return fields.join(' ');
}

/**
 * voxgate's one candidate: a host candidate at its public address and RTP port, component 1.
 * RFC 8445 5.1.2.1: priority = 2^24 * type preference (126 for host) + 2^8 * local preference
 * (65535: the only address) + (256 - component).
 */
export function hostCandidate(address: string, port: number): SdpCandidate {
  if (isIP(address) === 0) {
    throw new RangeError(
      `Expected an IP address for a WebRTC candidate (VOXGATE_PUBLIC_HOST) but received "${address}"`,
    );
  }
  return {
    foundation: '1',
    component: 1,
    transport: 'udp',
    priority: 126 * 2 ** 24 + 65535 * 2 ** 8 + (256 - 1),
    address,
    port,
    type: 'host',
    relatedAddress: null,
    relatedPort: null,
    extensions: new Map(),
  };
}
