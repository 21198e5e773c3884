import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  SipParseError,
  SipStreamFramer,
  isSipUri,
  parseMessage,
  rejectionStatus,
  textFromOctets,
} from '../../../src/sip/message/index.js';
import {
  FIXTURES,
  acceptRequest,
  acceptResponse,
  load,
  octets,
  reject,
  single,
  sip,
} from './message/rfc4475-harness.js';

/**
 * Every message of RFC 4475 (fixtures/sip/rfc4475, byte for byte from the RFC), handled as
 * its section says. Section numbers are the RFC's.
 */
describe('RFC 4475 3.1.1: valid messages parse to the values the RFC lists', () => {
  it('3.1.1.1 wsinv: a short tortuous INVITE', () => {
    const m = acceptRequest('wsinv');
    expect(m.method).toBe('INVITE');
    expect(sip(m.requestUri()).params.get('unknownparam')).toBeNull();
    const to = m.to();
    expect(to.displayName).toBeNull();
    expect(sip(to.uri).user).toBe('vivekg');
    expect(sip(to.uri).host).toBe('chair-dnrc.example.com');
    expect(to.tag).toBe('1918181833n');
    const from = m.from();
    expect(from.displayName).toBe('J Rosenberg \\"');
    expect(sip(from.uri).user).toBe('jdrosen');
    expect(from.tag).toBe('98asjd8');
    expect(m.maxForwards()).toBe(68);
    expect(m.callId()).toBe('wsinv.ndaksdj@192.0.2.1');
    expect(m.contentLength()).toBe(150);
    expect(m.body.length).toBe(150);
    expect(m.cseq()).toEqual({ seq: 9, method: 'INVITE' });
    expect(
      m.via().map((v) => [v.protocolName, v.protocolVersion, v.transport, v.host, v.branch]),
    ).toEqual([
      ['SIP', '2.0', 'UDP', '192.0.2.2', '390skdjuw'],
      ['SIP', '2.0', 'TCP', 'spindle.example.com', 'z9hG4bK9ikj8'],
      ['SIP', '2.0', 'UDP', '192.168.255.111', 'z9hG4bK30239'],
    ]);
    // An empty Subject, and unknown headers kept as values: folding becomes one SP, nothing
    // else changes, and the unusual value is one value (its grammar is unknown).
    expect(m.headers.get('Subject')).toBe('');
    expect(m.headers.get('NewFangledHeader')).toBe('newfangled value continued newfangled value');
    expect(m.headers.getAll('UnknownHeaderWithUnusualValue')).toEqual([';;,,;;,;']);
    expect(m.contentType()).toMatchObject({ type: 'application', subtype: 'sdp' });
    const [route] = m.route();
    expect(sip(route!.uri).host).toBe('services.example.com');
    expect([...sip(route!.uri).params]).toEqual([
      ['lr', null],
      ['unknownwith', 'value'],
      ['unknown-no-value', null],
    ]);
    const [contact] = single(m.contact());
    expect(contact!.displayName).toBe('Quoted string ""');
    expect([...contact!.params]).toEqual([
      ['newparam', 'newvalue'],
      ['secondparam', null],
      ['q', '0.33'],
    ]);
  });

  it('3.1.1.2 intmeth: a wide range of valid characters', () => {
    const m = acceptRequest('intmeth');
    const method = "!interesting-Method0123456789_*+`.%indeed'~";
    expect(m.method).toBe(method);
    const uri = sip(m.requestUri());
    expect(uri.user).toBe("1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*");
    expect(uri.password).toBe("&it+has=1,weird!*pas$wo~d_too.(doesn't-it)");
    expect(uri.host).toBe('example.com');
    expect(m.via()[0]!.branch).toBe("z9hG4bK-.!%66*_+`'~");
    // quoted-pairs expanded, a quoted NUL among them
    expect(m.to().displayName).toBe('BEL:\x07 NUL:\x00 DEL:\x7f');
    const from = m.from();
    expect(from.displayName).toBe("token1~` token2'+_ token3*%!.-");
    expect(from.tag).toBe("_token~1'+`*%!-.");
    expect(from.params.get("fromparam''~+*_!.-%")).toBe(octets('"работающий"'));
    expect(m.callId()).toBe('intmeth.word%ZK-!.*_+\'@word`~)(><:\\/"][?}{');
    expect(m.cseq()).toEqual({ seq: 139122385, method });
    expect(m.maxForwards()).toBe(255);
    const extension = m.headers.get("extensionHeader-!.%*+_`'~")!;
    expect(textFromOctets(extension)).toBe('\ufeff大停電');
  });

  it('3.1.1.3 esc01: valid use of the % escaping mechanism', () => {
    const m = acceptRequest('esc01');
    const ruri = sip(m.requestUri());
    expect(ruri.user).toBe('sips:user@example.com');
    expect(ruri.rawUser).toBe('sips%3Auser%40example.com');
    expect(ruri.host).toBe('example.net');
    expect(sip(m.to().uri).user).toBe('user');
    expect(sip(m.from().uri).user).toBe('I have spaces');
    const contact = sip(single(m.contact())[0]!.uri);
    expect(contact.user).toBe('caller');
    // %6C%72 is lr; n%61me is name, whose value is "value%41", not "valueA"
    expect([...contact.params]).toEqual([
      ['lr', null],
      ['name', 'value%41'],
    ]);
    expect(m.callId()).toBe('esc01.239409asdfakjkn23onasd0-3234');
    expect(m.contentType()).toMatchObject({ type: 'application', subtype: 'sdp' });
  });

  it('3.1.1.4 escnull: escaped nulls in URIs do not shorten them', () => {
    const m = acceptRequest('escnull');
    expect(sip(m.to().uri).user).toBe('null-\0-null');
    expect(sip(m.from().uri).user).toBe('null-\0-null');
    expect(m.from().tag).toBe('839923423');
    expect(single(m.contact()).map((c) => sip(c.uri).user)).toEqual(['\0', '\0\0']);
    expect(m.contentLength()).toBe(0);
  });

  it('3.1.1.5 esc02: % is not an escape in a method, display name or header name', () => {
    const m = acceptRequest('esc02');
    expect(m.method).toBe('RE%47IST%45R');
    expect(m.cseq().method).toBe('RE%47IST%45R');
    expect(m.to().displayName).toBe('%Z%45');
    expect(m.from().displayName).toBe('%Z%45');
    expect(m.via()[0]!.branch).toBe('z9hG4bK209%fzsnel234');
    expect(single(m.contact()).map((c) => sip(c.uri).host)).toEqual([
      'host1.example.com',
      'host3.example.com',
    ]);
    expect(m.headers.get('C%6Fntact')).toBe('<sip:alias2@host2.example.com>');
  });

  it('3.1.1.6 lwsdisp: no LWS between a display name and <', () => {
    const from = acceptRequest('lwsdisp').from();
    expect(from.displayName).toBe('caller');
    expect(sip(from.uri).user).toBe('caller');
    expect(from.tag).toBe('323');
  });

  it('3.1.1.7 longreq: long values and many values', () => {
    const m = acceptRequest('longreq');
    const to = m.to();
    expect(to.displayName).toBe(`I have a user name of ${'extreme'.repeat(10)} proportion`);
    const toUri = sip(to.uri);
    expect(toUri.port).toBe(6000);
    expect([...toUri.params]).toEqual([
      ['unknownparam1', `very${'long'.repeat(20)}value`],
      [`longparam${'name'.repeat(25)}`, 'shortvalue'],
      [`very${'long'.repeat(25)}ParameterNameWithNoValue`.toLowerCase(), null],
    ]);
    const from = m.from();
    expect(sip(from.uri).user).toBe('amazinglylongcallername'.repeat(5));
    expect(from.tag).toBe(`1${'298'.repeat(50)}2424`);
    expect(from.params.get(`unknownheaderparam${'name'.repeat(20)}`)).toBe(
      `unknowheaderparam${'value'.repeat(15)}`,
    );
    expect(from.params.get(`unknownvaluelessparam${'nameparam'.repeat(9)}name`)).toBeNull();
    expect(m.callId()).toBe(`longreq.one${'really'.repeat(20)}longcallid`);
    expect(m.cseq()).toEqual({ seq: 3882340, method: 'INVITE' });
    const long = `unknown-${'long'.repeat(20)}`;
    expect(m.headers.get(`Unknown-${'Long'.repeat(20)}-Name`)).toBe(
      `${long}-value; ${long}-parameter-name = ${long}-parameter-value`,
    );
    const vias = m.via();
    expect(vias).toHaveLength(34);
    expect(vias.slice(0, 33).map((v) => v.host)).toEqual(
      Array.from({ length: 33 }, (_, i) => `sip${33 - i}.example.com`),
    );
    expect(vias[33]!.params.get('received')).toBe('192.0.2.5');
    expect(vias[33]!.branch).toBe(`very${'long'.repeat(50)}branchvalue`);
    expect(sip(single(m.contact())[0]!.uri).user).toBe('amazinglylongcallername'.repeat(5));
    expect(m.contentLength()).toBe(150);
    expect(m.body.length).toBe(150);
  });

  it('3.1.1.8 dblreq: the octets after Content-Length in a datagram are ignored', () => {
    const m = acceptRequest('dblreq');
    expect(m.method).toBe('REGISTER');
    expect(m.callId()).toBe('dblreq.0ha0isndaksdj99sdfafnl3lk233412');
    expect(m.body.length).toBe(0);
    expect(m.toBuffer().includes('INVITE')).toBe(false);
  });

  it('3.1.1.9 semiuri: a semicolon in the user part of the Request-URI', () => {
    const m = acceptRequest('semiuri');
    const uri = sip(m.requestUri());
    expect(uri.user).toBe('user;par=u@example.net');
    expect(uri.host).toBe('example.com');
    expect(uri.params.size).toBe(0);
    expect(m.headers.getAll('Accept')).toEqual([
      'application/sdp',
      'application/pkcs7-mime',
      'multipart/mixed',
      'multipart/signed',
      'message/sip',
      'message/sipfrag',
    ]);
  });

  it('3.1.1.10 transports: every transport, and an unknown one', () => {
    const m = acceptRequest('transports');
    expect(m.via().map((v) => v.transport)).toEqual(['UDP', 'SCTP', 'TLS', 'UNKNOWN', 'TCP']);
    expect(m.callId()).toBe('transports.kijh4akdnaqjkwendsasfdj');
  });

  it('3.1.1.11 mpart01: a multipart body with binary octets', () => {
    const m = acceptRequest('mpart01');
    expect(m.body.length).toBe(553);
    expect(m.body.includes(0)).toBe(true);
    expect(m.contentType()).toEqual({
      type: 'multipart',
      subtype: 'mixed',
      params: new Map([['boundary', '7a9cbec02ceef655']]),
    });
    const [via] = m.via();
    expect(via!.port).toBe(5070);
    expect(via!.params.has('rport')).toBe(true);
    expect(via!.params.get('rport')).toBeNull();
    expect(m.date()).toBe(Date.UTC(2005, 9, 15, 4, 44, 56));
    expect(m.headers.get('Content-Transfer-Encoding')).toBe('binary');
    expect(m.toBuffer().subarray(-553).equals(m.body)).toBe(true);
  });

  it('3.1.1.12 unreason: a reason phrase with non-ASCII UTF-8', () => {
    const m = acceptResponse('unreason');
    expect(m.status).toBe(200);
    expect(m.reason).toBe('= 2**3 * 5**2 но сто девяносто девять - простое');
    expect(m.body.length).toBe(154);
  });

  it('3.1.1.13 noreason: an empty reason phrase', () => {
    const m = acceptResponse('noreason');
    expect(m.status).toBe(100);
    expect(m.reason).toBe('');
    expect(m.to().tag).toBe('902jndnke3');
  });
});

/** What a UAS does with a request it rejects: the status, and what it copies into it. */
function expectAnswerable(error: SipParseError, status: number, callId: string): void {
  expect(error.isRequest).toBe(true);
  expect(rejectionStatus(error)).toBe(status);
  expect(error.partial?.headers.get('Call-ID') ?? callId).toBe(callId);
}

describe('RFC 4475 3.1.2: invalid messages are rejected', () => {
  it('3.1.2.1 badinv01: extra semicolons and commas in Via', () => {
    const error = reject('badinv01');
    expect(error.reason).toBe('Malformed Via header');
    expectAnswerable(error, 400, 'badinv01.0ha0isndaksdjasdf3234nas');
  });

  it('3.1.2.2 clerr: a Content-Length larger than the body', () => {
    const error = reject('clerr');
    expect(error.reason).toBe('Content-Length exceeds body');
    expectAnswerable(error, 400, 'clerr.0ha0isndaksdjweiafasdk3');
    // Over a stream, nothing can be done but wait for more (bounded by the maximum size).
    const framer = new SipStreamFramer();
    expect(framer.push(load('clerr'))).toEqual([]);
    expect(framer.buffered).toBe(load('clerr').length);
  });

  it('3.1.2.3 ncl: a negative Content-Length', () => {
    const error = reject('ncl');
    expect(error.reason).toBe('Bad Content-Length');
    expectAnswerable(error, 400, 'ncl.0ha0isndaksdj2193423r542w35');
    // Over a stream the framing error is not recoverable: the connection is to be closed.
    const [item] = new SipStreamFramer().push(load('ncl'));
    expect(item).toMatchObject({ kind: 'error' });
  });

  it('3.1.2.4 scalar02: scalar values out of range', () => {
    const error = reject('scalar02');
    expect(error.reason).toBe('Malformed CSeq header');
    expectAnswerable(error, 400, 'scalar02.23o0pd9vanlq3wnrlnewofjas9ui32');
    const m = parseMessage(load('scalar02'));
    expect(() => m.maxForwards()).toThrow('Malformed Max-Forwards header');
    expect(() => m.expires()).toThrow('Malformed Expires header');
  });

  it('3.1.2.5 scalarlg: a response with scalar values out of range is dropped', () => {
    const error = reject('scalarlg');
    expect(error.reason).toBe('Malformed CSeq header');
    expect(error.isRequest).toBe(false);
    expect(rejectionStatus(error)).toBeNull();
  });

  it('3.1.2.6 quotbal: an unterminated quoted string in To', () => {
    const error = reject('quotbal');
    expect(error.reason).toBe('Malformed To header');
    expectAnswerable(error, 400, 'quotbal.aksdj');
  });

  it('3.1.2.7 ltgtruri: a Request-URI in angle brackets', () => {
    const error = reject('ltgtruri');
    expect(error.reason).toBe('Malformed Request-URI');
    expect(error.method).toBe('INVITE');
    expectAnswerable(error, 400, 'ltgtruri.1@192.0.2.5');
  });

  it('3.1.2.8 lwsruri: whitespace inside the Request-URI', () => {
    const error = reject('lwsruri');
    expect(error.reason).toBe('Malformed Request-URI');
    expectAnswerable(error, 400, 'lwsruri.asdfasdoeoi2323-asdfwrn23-asd834rk423');
  });

  it('3.1.2.9 lwsstart: several SP between the elements of the start line', () => {
    const error = reject('lwsstart');
    expect(error.reason).toBe('Malformed Request-Line');
    expectAnswerable(error, 400, 'lwsstart.dfknq234oi243099adsdfnawe3@example.com');
  });

  it('3.1.2.10 trws: SP after the SIP-Version', () => {
    const error = reject('trws');
    expect(error.reason).toBe('Malformed Request-Line');
    expectAnswerable(error, 400, 'trws.oicu34958239neffasdhr2345r');
  });

  it('3.1.2.11 escruri: escaped headers in the Request-URI', () => {
    const error = reject('escruri');
    expect(error.reason).toBe('Malformed Request-URI');
    expectAnswerable(error, 400, 'escruri.23940-asdfhj-aje3br-234q098w-fawerh2q-h4n5');
  });

  it('3.1.2.12 baddate: a Date not in GMT', () => {
    const error = reject('baddate');
    expect(error.reason).toBe('Malformed Date header');
    expectAnswerable(error, 400, 'baddate.239423mnsadf3j23lj42--sedfnm234');
  });

  it('3.1.2.13 regbadct: a Contact URI with headers, not in angle brackets', () => {
    const error = reject('regbadct');
    expect(error.reason).toBe('Malformed Contact header');
    expectAnswerable(error, 400, 'regbadct.k345asrl3fdbv@10.0.0.1');
  });

  it('3.1.2.14 badaspec: spaces inside the angle brackets of To', () => {
    const error = reject('badaspec');
    expect(error.reason).toBe('Malformed To header');
    expectAnswerable(error, 400, 'badaspec.sdf0234n2nds0a099u23h3hnnw009cdkne3');
  });

  it('3.1.2.15 baddn: display names with non-token characters, unquoted', () => {
    const error = reject('baddn');
    expect(error.reason).toBe('Malformed From header');
    expectAnswerable(error, 400, 'baddn.31415@c.example.com');
    expect(() => parseMessage(load('baddn')).to()).toThrow('Malformed To header');
  });

  it('3.1.2.16 badvers: SIP/7.0 is answered 505', () => {
    const error = reject('badvers');
    expect(error.kind).toBe('version-not-supported');
    expect(error.method).toBe('OPTIONS');
    expectAnswerable(error, 505, 'badvers.31417@c.example.com');
    expect(error.partial?.headers.getAll('Via')).toEqual([
      'SIP/7.0/UDP c.example.com;branch=z9hG4bKkdjuw',
    ]);
  });

  it('3.1.2.17 mismatch01: the CSeq method is not the request method', () => {
    const error = reject('mismatch01');
    expect(error.reason).toBe('CSeq method does not match the request method');
    expectAnswerable(error, 400, 'mismatch01.dj0234sxdfl3');
  });

  it('3.1.2.18 mismatch02: an unknown method and a CSeq naming another', () => {
    // The RFC prefers 501 from an element that does not know NEWMETHOD and accepts 400; the
    // message layer does not know which methods its user implements, so it says 400.
    const error = reject('mismatch02');
    expect(error.method).toBe('NEWMETHOD');
    expect(error.reason).toBe('CSeq method does not match the request method');
    expectAnswerable(error, 400, 'mismatch02.dj0234sxdfl3');
  });

  it('3.1.2.19 bigcode: a response code over 699 is dropped', () => {
    const error = reject('bigcode');
    expect(error.reason).toBe('Bad status code');
    expect(error.isRequest).toBe(false);
    expect(rejectionStatus(error)).toBeNull();
  });
});

describe('RFC 4475 3.2: transaction layer', () => {
  it('3.2.1 badbranch: a magic cookie with no identifier parses; the branch is kept as is', () => {
    const m = acceptRequest('badbranch');
    expect(m.via()[0]!.branch).toBe('z9hG4bK');
    expect(m.callId()).toBe('badbranch.sadonfo23i420jv0as0derf3j3n');
  });
});

// The application answers (416, 420, 415, 483...) belong to the UAS and proxy; these tests
// check the parsed facts each answer rests on.
describe('RFC 4475 3.3: application layer', () => {
  it('3.3.1 insuf: missing Call-ID, From and To is a 400', () => {
    const error = reject('insuf');
    expect(error.reason).toBe('Missing From header');
    expect(rejectionStatus(error)).toBe(400);
    const m = parseMessage(load('insuf'));
    expect(['From', 'To', 'Call-ID'].map((name) => m.headers.has(name))).toEqual([
      false,
      false,
      false,
    ]);
    expect(() => m.callId()).toThrow('Missing Call-ID header');
  });

  it('3.3.2 unkscm: an unknown Request-URI scheme (the UAS answers 416)', () => {
    const uri = acceptRequest('unkscm').requestUri();
    expect(isSipUri(uri)).toBe(false);
    expect(uri).toEqual({
      scheme: 'nobodyknowsthisscheme',
      raw: 'nobodyKnowsThisScheme:totallyopaquecontent',
    });
  });

  it('3.3.3 novelsc: a known but atypical Request-URI scheme (416 or 404)', () => {
    const uri = acceptRequest('novelsc').requestUri();
    expect(isSipUri(uri)).toBe(false);
    expect(uri.scheme).toBe('soap.beep');
  });

  it('3.3.4 unksm2: other schemes in To, From and Contact parse', () => {
    const m = acceptRequest('unksm2');
    // A registrar answers 400: the To of a REGISTER must be a SIP or SIPS AOR.
    expect(m.to().uri).toEqual({ scheme: 'isbn', raw: 'isbn:2983792873' });
    expect(m.from().uri).toEqual({ scheme: 'http', raw: 'http://www.example.com' });
    expect(m.from().tag).toBe('3234233');
    expect(single(m.contact())[0]!.uri).toEqual({ scheme: 'name', raw: 'name:John_Smith' });
  });

  it('3.3.5 bext01: unknown Require and Proxy-Require tags (the UAS answers 420)', () => {
    const m = acceptRequest('bext01');
    expect(m.requires()).toEqual(['nothingSupportsThis', 'nothingSupportsThisEither']);
    expect(m.proxyRequire()).toEqual(['noProxiesSupportThis', 'norDoAnyProxiesSupportThis']);
  });

  it('3.3.6 invut: an unknown Content-Type (the UAS answers 415)', () => {
    const m = acceptRequest('invut');
    expect(m.contentType()).toMatchObject({ type: 'application', subtype: 'unknownformat' });
    expect(m.body.toString('latin1')).toBe('<audio>\r\n <pcmu port="443"/>\r\n</audio>\r\n');
  });

  it('3.3.7 regaut01: an unknown authorization scheme (a registrar challenges, 401)', () => {
    const [credentials] = acceptRequest('regaut01').authorization();
    expect(credentials!.scheme).toBe('NoOneKnowsThisScheme');
    expect([...credentials!.params]).toEqual([['opaque-data', 'here']]);
  });

  it('3.3.8 multi01: several values in single-valued headers is a 400', () => {
    const error = reject('multi01');
    expect(error.reason).toBe('Multiple From headers');
    expect(rejectionStatus(error)).toBe(400);
    const m = parseMessage(load('multi01'));
    expect(['CSeq', 'Call-ID', 'To', 'Max-Forwards'].map((h) => m.headers.count(h))).toEqual([
      2, 2, 2, 2,
    ]);
    expect(() => m.cseq()).toThrow('Multiple CSeq headers');
  });

  it('3.3.9 mcl01: several Content-Length values cannot frame the message', () => {
    const error = reject('mcl01');
    expect(error.reason).toBe('Multiple Content-Length headers');
    expectAnswerable(error, 400, 'mcl01.fhn2323orihawfdoa3o4r52o3irsdf');
    const [item] = new SipStreamFramer().push(load('mcl01'));
    expect(item).toMatchObject({ kind: 'error' });
  });

  it('3.3.10 bcast: a response whose second Via is the broadcast address', () => {
    const m = acceptResponse('bcast');
    // A proxy must not forward it there; an endpoint discards it.
    expect(m.via().map((v) => v.host)).toEqual(['192.0.2.198', '255.255.255.255']);
  });

  it('3.3.11 zeromf: Max-Forwards 0 (a proxy answers 483; an endpoint processes it)', () => {
    expect(acceptRequest('zeromf').maxForwards()).toBe(0);
  });

  it('3.3.12 cparam01: a parameter after an unbracketed Contact URI is a contact-param', () => {
    const [contact] = single(acceptRequest('cparam01').contact());
    expect(contact!.params.has('unknownparam')).toBe(true);
    expect(sip(contact!.uri).params.size).toBe(0);
    expect(sip(contact!.uri).user).toBe('+19725552222');
  });

  it('3.3.13 cparam02: a parameter inside the brackets is a URI parameter', () => {
    const [contact] = single(acceptRequest('cparam02').contact());
    expect(contact!.params.size).toBe(0);
    expect(sip(contact!.uri).params.has('unknownparam')).toBe(true);
  });

  it('3.3.14 regescrt: a Contact URI with an escaped header is kept for the binding', () => {
    const [contact] = single(acceptRequest('regescrt').contact());
    expect([...sip(contact!.uri).headers]).toEqual([['Route', '<sip:sip.example.com>']]);
    expect(sip(contact!.uri).raw).toBe('sip:user@example.com?Route=%3Csip:sip.example.com%3E');
  });

  it('3.3.15 sdp01: an Accept without SDP (the UAS answers 406)', () => {
    const m = acceptRequest('sdp01');
    expect(m.headers.getAll('Accept')).toEqual(['text/nobodyKnowsThis']);
    expect(m.contentType()).toMatchObject({ type: 'application', subtype: 'sdp' });
  });
});

describe('RFC 4475 3.4: backward compatibility', () => {
  it('3.4.1 inv2543: an RFC 2543 INVITE is accepted', () => {
    const m = acceptRequest('inv2543');
    expect(m.via()[0]!.branch).toBeNull();
    expect(m.from().tag).toBeNull();
    expect(m.maxForwards()).toBeNull();
    expect(m.contentLength()).toBeNull();
    // Without Content-Length, the body of a datagram is the rest of it.
    expect(m.body.toString('latin1')).toMatch(/^v=0\r\n[\s\S]*m=audio 49217 RTP\/AVP 0\r\n$/);
    expect(sip(m.recordRoute()[0]!.uri).params.get('maddr')).toBe('ss1.example.com');
    expect(sip(m.from().uri).params.get('user')).toBe('phone');
    // RFC 3261 20.10: after an unbracketed URI, ";user=phone" is a header parameter.
    expect(m.to().params.get('user')).toBe('phone');
    // Over a stream, Content-Length is required (RFC 3261 18.3).
    expect(() => parseMessage(load('inv2543'), { streamed: true })).toThrow(
      'Missing Content-Length',
    );
  });
});

describe('RFC 4475 archive extras', () => {
  it('test.dat (in the fixture set, described by no section): no SIP-Version, no Via', () => {
    const error = reject('test');
    expect(error.reason).toBe('Malformed Request-Line');
    expect(error.method).toBe('INVITE');
    expect(rejectionStatus(error)).toBe(400);
    // The row without a colon is left out of what could be read.
    expect([...error.partial!.headers].map(([name]) => name)).not.toContain('Foobar roobar');
  });

  it('every fixture has a test above', () => {
    const names = readdirSync(FIXTURES)
      .filter((name) => name.endsWith('.dat'))
      .map((name) => name.slice(0, -4));
    expect(names).toHaveLength(50);
    const source = readFileSync(fileURLToPath(import.meta.url), 'utf8');
    for (const name of names) expect(source).toContain(`('${name}'`);
  });
});
