/** Messages as a softphone, a trunk and this stack exchange them, in canonical form. */

const lines = (...rows: string[]): Buffer => Buffer.from(rows.join('\r\n'), 'latin1');

const SDP = [
  'v=0',
  'o=alice 2890844526 2890844526 IN IP4 192.0.2.10',
  's=-',
  'c=IN IP4 192.0.2.10',
  't=0 0',
  'm=audio 49170 RTP/AVP 0 8 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  '',
].join('\r\n');

export const INVITE = lines(
  'INVITE sip:bob@voxgate.example.com SIP/2.0',
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport',
  'Max-Forwards: 70',
  'To: Bob <sip:bob@voxgate.example.com>',
  'From: "Alice Liddell" <sip:alice@atlanta.example.com>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.atlanta.example.com',
  'CSeq: 314159 INVITE',
  'Contact: <sip:alice@192.0.2.10:5060;transport=udp>',
  'Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE',
  'Supported: replaces, timer',
  'User-Agent: voxgate-test/1.0',
  'Content-Type: application/sdp',
  `Content-Length: ${SDP.length}`,
  '',
  SDP,
);

export const OK_200 = lines(
  'SIP/2.0 200 OK',
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport=5060;received=192.0.2.10',
  'Record-Route: <sip:proxy.example.com;lr>',
  'To: Bob <sip:bob@voxgate.example.com>;tag=a6c85cf',
  'From: "Alice Liddell" <sip:alice@atlanta.example.com>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.atlanta.example.com',
  'CSeq: 314159 INVITE',
  'Contact: <sip:bob@[2001:db8::20]:5060>',
  'Content-Type: application/sdp',
  `Content-Length: ${SDP.length}`,
  '',
  SDP,
);

export const REGISTER = lines(
  'REGISTER sip:voxgate.example.com SIP/2.0',
  'Via: SIP/2.0/TCP 192.0.2.30:50312;branch=z9hG4bKnashds7',
  'Max-Forwards: 70',
  'To: <sip:100200300400@voxgate.example.com>',
  'From: <sip:100200300400@voxgate.example.com>;tag=456248',
  'Call-ID: 843817637684230@998sdasdh09',
  'CSeq: 1826 REGISTER',
  'Contact: <sip:100200300400@192.0.2.30:50312;transport=tcp>;expires=3600;+sip.instance="<urn:uuid:00000000-0000-1000-8000-AABBCCDDEEFF>"',
  'Authorization: Digest username="100200300400", realm="voxgate.example.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="sip:voxgate.example.com", response="6629fae49393a05397450978507c4ef1", algorithm=MD5, cnonce="0a4f113b", qop=auth, nc=00000001',
  'Expires: 3600',
  'Content-Length: 0',
  '',
  '',
);

export const ACK = lines(
  'ACK sip:bob@192.0.2.20:5060 SIP/2.0',
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bKnashd92',
  'Max-Forwards: 70',
  'Route: <sip:proxy.example.com;lr>',
  'To: Bob <sip:bob@voxgate.example.com>;tag=a6c85cf',
  'From: "Alice Liddell" <sip:alice@atlanta.example.com>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.atlanta.example.com',
  'CSeq: 314159 ACK',
  'Content-Length: 0',
  '',
  '',
);

export const UNAUTHORIZED_401 = lines(
  'SIP/2.0 401 Unauthorized',
  'Via: SIP/2.0/TCP 192.0.2.30:50312;branch=z9hG4bKnashds7;received=192.0.2.30',
  'To: <sip:100200300400@voxgate.example.com>;tag=2493k59kd',
  'From: <sip:100200300400@voxgate.example.com>;tag=456248',
  'Call-ID: 843817637684230@998sdasdh09',
  'CSeq: 1826 REGISTER',
  'WWW-Authenticate: Digest realm="voxgate.example.com", qop="auth", nonce="ea9c8e88df84f1cec4341ae6cbe5a359", algorithm=SHA-256, stale=FALSE',
  'WWW-Authenticate: Digest realm="voxgate.example.com", qop="auth", nonce="ea9c8e88df84f1cec4341ae6cbe5a359", algorithm=MD5',
  'Content-Length: 0',
  '',
  '',
);

export const BYE_COMPACT = lines(
  'BYE sip:alice@192.0.2.10:5060;transport=udp SIP/2.0',
  'v: SIP/2.0/WSS df7jal23ls0d.invalid;branch=z9hG4bKmrbgnt',
  'Max-Forwards: 69',
  't: "Alice Liddell" <sip:alice@atlanta.example.com>;tag=1928301774',
  'f: Bob <sip:bob@voxgate.example.com>;tag=a6c85cf',
  'i: a84b4c76e66710@pc33.atlanta.example.com',
  'CSeq: 231 BYE',
  'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl',
  'l: 0',
  '',
  '',
);

export const TYPICAL = { INVITE, OK_200, REGISTER, ACK, UNAUTHORIZED_401, BYE_COMPACT };
