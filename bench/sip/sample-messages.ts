import type { UasFields } from './uas-fields.js';

/** One input of the benchmark: the exact bytes every parser gets, and what it must read from them. */
export interface SampleMessage {
  name: string;
  bytes: Buffer;
  expected: UasFields;
}

const CALL_ID = 'a84b4c76e66710-3f9b2c1d@203.0.113.17';
const CALLER_BRANCH = 'z9hG4bK-524287-1---77ba6e2ef2e3bc5c';
const PROXY_BRANCH = 'z9hG4bK8f2a1c9e.0';
const FROM_TAG = '1928301774';
const TO_TAG = 'a6c85cf-4e1b';

const OFFER = [
  'v=0',
  'o=alice 2890844526 2890844526 IN IP4 203.0.113.17',
  's=Zoiper',
  'c=IN IP4 203.0.113.17',
  't=0 0',
  'm=audio 49170 RTP/AVP 0 8 9 18 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:9 G722/8000',
  'a=rtpmap:18 G729/8000',
  'a=fmtp:18 annexb=no',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  'a=ptime:20',
  'a=sendrecv',
  '',
].join('\r\n');

const ANSWER = [
  'v=0',
  'o=voxgate 1700000000 1700000000 IN IP4 198.51.100.20',
  's=voxgate',
  'c=IN IP4 198.51.100.20',
  't=0 0',
  'm=audio 30000 RTP/AVP 0 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  'a=ptime:20',
  'a=sendrecv',
  '',
].join('\r\n');

function message(startLine: string, headers: string[], body: string): Buffer {
  const head = [startLine, ...headers, `Content-Length: ${Buffer.byteLength(body)}`, '', ''];
  return Buffer.from(head.join('\r\n') + body, 'utf8');
}

/** An INVITE as a softphone sends it straight to the gateway: one Via, an SDP offer, ~1 KB. */
const INVITE: SampleMessage = {
  name: 'INVITE',
  bytes: message(
    'INVITE sip:+14155550123@gw.voxgate.example;transport=udp SIP/2.0',
    [
      `Via: SIP/2.0/UDP 203.0.113.17:5060;branch=${CALLER_BRANCH};rport`,
      'Max-Forwards: 70',
      'Contact: <sip:alice@203.0.113.17:5060;transport=udp>',
      'To: "Voxgate Support" <sip:+14155550123@gw.voxgate.example>',
      `From: "Alice Liddell" <sip:alice@carrier.example>;tag=${FROM_TAG}`,
      `Call-ID: ${CALL_ID}`,
      'CSeq: 314159 INVITE',
      'Allow: INVITE, ACK, CANCEL, BYE, NOTIFY, REFER, MESSAGE, OPTIONS, INFO, SUBSCRIBE, UPDATE',
      'Supported: replaces, norefersub, extended-refer, timer, outbound, path, X-cisco-serviceuri',
      'User-Agent: Z 5.6.2 v2.10.20.3-mod',
      'Allow-Events: presence, kpml, talk',
      'Content-Type: application/sdp',
    ],
    OFFER,
  ),
  expected: {
    method: 'INVITE',
    status: null,
    requestUser: '+14155550123',
    requestHost: 'gw.voxgate.example',
    topViaBranch: CALLER_BRANCH,
    fromTag: FROM_TAG,
    toTag: null,
    callId: CALL_ID,
    cseqSeq: 314159,
    cseqMethod: 'INVITE',
    bodyLength: Buffer.byteLength(OFFER),
  },
};

/** The 200 OK to it as the record-routing proxy in front of the gateway receives it: two Vias. */
const OK_200: SampleMessage = {
  name: '200 OK',
  bytes: message(
    'SIP/2.0 200 OK',
    [
      `Via: SIP/2.0/UDP 10.0.0.5:5060;branch=${PROXY_BRANCH};received=10.0.0.5`,
      `Via: SIP/2.0/UDP 203.0.113.17:5060;branch=${CALLER_BRANCH};rport=5060;received=203.0.113.17`,
      'Record-Route: <sip:10.0.0.5;lr>',
      `From: "Alice Liddell" <sip:alice@carrier.example>;tag=${FROM_TAG}`,
      `To: "Voxgate Support" <sip:+14155550123@gw.voxgate.example>;tag=${TO_TAG}`,
      `Call-ID: ${CALL_ID}`,
      'CSeq: 314159 INVITE',
      'Contact: <sip:+14155550123@198.51.100.20:5060;transport=udp>',
      'Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE',
      'Supported: timer',
      'Server: voxgate/0.1.0',
      'Content-Type: application/sdp',
    ],
    ANSWER,
  ),
  expected: {
    method: null,
    status: 200,
    requestUser: null,
    requestHost: null,
    topViaBranch: PROXY_BRANCH,
    fromTag: FROM_TAG,
    toTag: TO_TAG,
    callId: CALL_ID,
    cseqSeq: 314159,
    cseqMethod: 'INVITE',
    bodyLength: Buffer.byteLength(ANSWER),
  },
};

export const SAMPLE_MESSAGES: readonly SampleMessage[] = [INVITE, OK_200];
