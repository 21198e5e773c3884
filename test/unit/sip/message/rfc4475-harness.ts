import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  type AbsoluteUri,
  type NameAddr,
  type SipUri,
  SipParseError,
  SipRequest,
  SipResponse,
  isSipUri,
  parseMessage,
  validateRequest,
  validateResponse,
} from '../../../../src/sip/message/index.js';

/** Loading and checking the RFC 4475 messages, for rfc4475.test.ts. */
export const FIXTURES = fileURLToPath(
  new URL('../../../../fixtures/sip/rfc4475/', import.meta.url),
);

export function load(name: string): Buffer {
  return readFileSync(`${FIXTURES}${name}.dat`);
}

/** Parses and validates a message the RFC says must be accepted. */
export function accept(name: string): SipRequest | SipResponse {
  const message = parseMessage(load(name));
  if (message instanceof SipRequest) validateRequest(message);
  else validateResponse(message);
  return message;
}

export function acceptRequest(name: string): SipRequest {
  const message = accept(name);
  if (!(message instanceof SipRequest)) throw new Error(`${name} is not a request`);
  return message;
}

export function acceptResponse(name: string): SipResponse {
  const message = accept(name);
  if (!(message instanceof SipResponse)) throw new Error(`${name} is not a response`);
  return message;
}

/** Parses and validates a message the RFC says must be rejected; returns the fault. */
export function reject(name: string): SipParseError {
  try {
    accept(name);
  } catch (error) {
    if (error instanceof SipParseError) return error;
    throw error;
  }
  throw new Error(`${name} was accepted`);
}

export function sip(uri: SipUri | AbsoluteUri): SipUri {
  if (!isSipUri(uri)) throw new Error(`${uri.raw} is not a SIP URI`);
  return uri;
}

export function single(addresses: NameAddr[] | '*'): NameAddr[] {
  if (addresses === '*') throw new Error('wildcard Contact');
  return addresses;
}

/** The octet string of a UTF-8 text (message text is kept as octets). */
export const octets = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
