import { describe, expect, it } from 'vitest';
import {
  parseSessionDescription,
  SdpParseError,
  SdpSession,
  sessionChanges,
  type AcceptedOffer,
  type AnswerOutcome,
  type MediaDirection,
} from '../../../../src/sip/sdp/index.js';
import { ASTERISK, BARESIP, offer, sdp, SIPP_UAC, SIPP_UAC_PCAP } from './sdp-fixtures.js';

function session(options: Partial<ConstructorParameters<typeof SdpSession>[0]> = {}): SdpSession {
  return new SdpSession({ address: '192.0.2.1', port: 20000, sessionId: '4242', ...options });
}

function accepted(outcome: AnswerOutcome): AcceptedOffer {
  if (!outcome.ok) throw new Error(`expected an accepted offer, got 488: ${outcome.reason}`);
  return outcome;
}

describe('answering an offer (RFC 3264 6)', () => {
  it.each<[string, MediaDirection, MediaDirection]>([
    ['a=sendrecv', 'sendrecv', 'sendrecv'],
    ['a=sendonly', 'sendrecv', 'recvonly'],
    ['a=recvonly', 'sendrecv', 'sendonly'],
    ['a=inactive', 'sendrecv', 'inactive'],
    ['a=sendrecv', 'sendonly', 'sendonly'],
    ['a=sendonly', 'sendonly', 'inactive'],
    ['a=recvonly', 'recvonly', 'inactive'],
    ['a=sendrecv', 'inactive', 'inactive'],
  ])('answers an offer with %s, when we want %s, by %s', (attribute, wanted, expected) => {
    const answer = accepted(session().answer(offer({ attributes: [attribute] }), wanted));
    expect(answer.audio.direction).toBe(expected);
    expect(answer.sdp).toContain(`a=${expected}\r\n`);
  });

  it('takes sendrecv when the offer says nothing, and a session-level direction', () => {
    expect(accepted(session().answer(SIPP_UAC)).audio.direction).toBe('sendrecv');
    const sessionLevel = SIPP_UAC.replace('t=0 0\r\n', 't=0 0\r\na=sendonly\r\n');
    expect(accepted(session().answer(sessionLevel)).audio.direction).toBe('recvonly');
  });

  it('reads the old c=0.0.0.0 hold as the peer not wanting media, and answers recvonly', () => {
    const answer = accepted(session().answer(offer({ connection: '0.0.0.0' })));
    expect(answer.audio.heldByPeer).toBe(true);
    expect(answer.audio.direction).toBe('recvonly');
    expect(answer.sdp).toContain('a=recvonly\r\n');
  });

  it('picks the first codec it serves in the offerer order', () => {
    expect(accepted(session().answer(offer({ formats: '8 0 101' }))).audio.codec.encoding).toBe(
      'PCMA',
    );
    expect(accepted(session().answer(offer({ formats: '0 8 101' }))).audio.codec.encoding).toBe(
      'PCMU',
    );
    expect(accepted(session().answer(ASTERISK)).audio.codec.encoding).toBe('PCMA');
    // baresip puts Opus first: it gets Opus, with its own payload type.
    const fromBaresip = accepted(session().answer(BARESIP)).audio;
    expect(fromBaresip.codec).toMatchObject({ encoding: 'opus', payloadType: 96, channels: 2 });
    // Unless the session serves G.711 alone.
    const g711 = accepted(session({ codecs: ['PCMU', 'PCMA'] }).answer(BARESIP)).audio;
    expect(g711.codec).toMatchObject({ encoding: 'PCMU', payloadType: 0 });
    // Or takes G.711 alone in offers while offering its default (VOXGATE_SIP_OPUS=false).
    const optedOut = session({ answerCodecs: ['PCMU', 'PCMA'] });
    expect(accepted(optedOut.answer(BARESIP)).audio.codec.encoding).toBe('PCMU');
    expect(session({ answerCodecs: ['PCMU', 'PCMA'] }).createOffer()).toMatch(
      /^m=audio \d+ RTP\/AVP 0 8 101\r$/m,
    );
  });

  it("answers Opus (RFC 7587 7) with opus/48000/2 and voxgate's own fmtp, keeping the peer's", () => {
    const chrome = sdp(`
v=0
o=- 4611731400430051336 2 IN IP4 127.0.0.1
s=-
c=IN IP4 203.0.113.9
t=0 0
m=audio 9 RTP/AVP 111 63 9 0 8 13 110 126
a=rtpmap:111 opus/48000/2
a=fmtp:111 minptime=10;useinbandfec=1;usedtx=1;maxaveragebitrate=20000
a=rtpmap:63 red/48000/2
a=rtpmap:9 G722/8000
a=rtpmap:0 PCMU/8000
a=rtpmap:8 PCMA/8000
a=rtpmap:13 CN/8000
a=rtpmap:110 telephone-event/48000
a=rtpmap:126 telephone-event/8000
a=ptime:20
`);
    const answer = accepted(session().answer(chrome));
    expect(answer.audio.codec).toMatchObject({
      encoding: 'opus',
      payloadType: 111,
      clockRate: 48000,
      fmtp: 'minptime=10;useinbandfec=1;usedtx=1;maxaveragebitrate=20000',
    });
    // The telephone-event at Opus's clock rate is the one taken.
    expect(answer.audio.telephoneEvent).toMatchObject({ payloadType: 110, clockRate: 48000 });
    expect(answer.sdp).toContain(
      'm=audio 20000 RTP/AVP 111 110\r\n' +
        'a=rtpmap:111 opus/48000/2\r\n' +
        'a=rtpmap:110 telephone-event/48000\r\n' +
        'a=fmtp:111 minptime=10;useinbandfec=1;maxplaybackrate=16000;sprop-maxcapturerate=16000\r\n' +
        'a=fmtp:110 0-15\r\n',
    );
    // opus/48000 with one channel, as some peers write it, is Opus too.
    const mono = chrome.replace('opus/48000/2', 'opus/48000');
    expect(accepted(session().answer(mono)).audio.codec.encoding).toBe('opus');
  });

  it('takes L16 only when configured, with the offerer dynamic payload type', () => {
    const l16 = sdp(`
v=0
o=- 1 1 IN IP4 203.0.113.5
s=-
c=IN IP4 203.0.113.5
t=0 0
m=audio 40000 RTP/AVP 110 0
a=rtpmap:110 L16/16000
a=rtpmap:0 PCMU/8000
`);
    expect(accepted(session().answer(l16)).audio.codec.encoding).toBe('PCMU');
    const wide = accepted(session({ codecs: ['L16/16000', 'PCMU'] }).answer(l16));
    expect(wide.audio.codec).toMatchObject({ payloadType: 110, encoding: 'L16', clockRate: 16000 });
    expect(wide.sdp).toContain('m=audio 20000 RTP/AVP 110\r\na=rtpmap:110 L16/16000\r\n');
  });

  it('keeps telephone-event with the offerer payload type, and its common events', () => {
    const answer = accepted(session().answer(BARESIP));
    expect(answer.audio.telephoneEvent).toMatchObject({ payloadType: 100, fmtp: '0-15' });
    expect(answer.sdp).toContain('m=audio 20000 RTP/AVP 96 100\r\n');
    expect(answer.sdp).toContain('a=rtpmap:100 telephone-event/8000\r\n');
    expect(answer.sdp).toContain('a=fmtp:100 0-15\r\n');
    const fromSipp = accepted(session().answer(SIPP_UAC_PCAP));
    expect(fromSipp.audio.telephoneEvent).toMatchObject({ payloadType: 101, fmtp: '0-11,16' });
  });

  it('leaves telephone-event out when the offer has none', () => {
    const answer = accepted(session().answer(SIPP_UAC));
    expect(answer.audio.telephoneEvent).toBeNull();
    expect(answer.sdp).toContain('m=audio 20000 RTP/AVP 0\r\n');
    expect(answer.sdp).not.toContain('telephone-event');
  });

  it('rejects video with port 0 and keeps its m= line', () => {
    const answer = accepted(session().answer(BARESIP));
    const lines = answer.sdp.split('\r\n');
    expect(lines.filter((line) => line.startsWith('m='))).toEqual([
      'm=audio 20000 RTP/AVP 96 100',
      'm=video 0 RTP/AVP 97',
    ]);
    expect(answer.audio.remoteRtcpPort).toBe(24851);
  });

  it('rejects a second audio stream and streams it cannot carry', () => {
    const text = offer({
      extra: 'm=audio 40002 RTP/AVP 0\r\nm=image 40004 udptl t38\r\n',
    });
    const lines = accepted(session().answer(text)).sdp.split('\r\n');
    expect(lines.filter((line) => line.startsWith('m='))).toEqual([
      'm=audio 20000 RTP/AVP 0 101',
      'm=audio 0 RTP/AVP 0',
      'm=image 0 udptl t38',
    ]);
  });

  it('serves the first audio stream it can when an earlier one has no common codec', () => {
    const text = offer({ formats: '18', extra: 'm=audio 40002 RTP/AVP 8\r\n' });
    const answer = accepted(session().answer(text));
    expect(answer.audio).toMatchObject({ streamIndex: 1, remotePort: 40002 });
    expect(answer.sdp).toContain('m=audio 0 RTP/AVP 18\r\n');
  });

  it('fails with 488 when no audio codec matches, or there is no audio', () => {
    const g729 = session().answer(offer({ formats: '18 101' }));
    expect(g729).toEqual({ ok: false, status: 488, reason: expect.stringMatching(/codec/) });
    const videoOnly = sdp(`
v=0
o=- 1 1 IN IP4 203.0.113.5
s=-
c=IN IP4 203.0.113.5
t=0 0
m=video 40000 RTP/AVP 97
a=rtpmap:97 H264/90000
`);
    expect(session().answer(videoOnly)).toMatchObject({ ok: false, status: 488 });
    expect(session().answer(offer({ port: 0 }))).toMatchObject({ ok: false, status: 488 });
  });

  it('reads where to send and the peer ptime', () => {
    const answer = accepted(session().answer(offer({ attributes: ['a=ptime:30'] })));
    expect(answer.audio).toMatchObject({
      remoteAddress: '203.0.113.5',
      remotePort: 40000,
      remoteRtcpPort: 40001,
      ptime: 30,
    });
    expect(answer.sdp).toContain('c=IN IP4 192.0.2.1\r\n');
    expect(answer.sdp).toContain('a=ptime:20\r\n');
  });
});

describe('making an offer', () => {
  it('offers PCMU, PCMA and telephone-event 0-16 at ptime 20', () => {
    const text = session().createOffer();
    expect(text).toBe(
      sdp(`
v=0
o=voxgate 4242 4242 IN IP4 192.0.2.1
s=-
c=IN IP4 192.0.2.1
t=0 0
m=audio 20000 RTP/AVP 0 8 101
a=rtpmap:0 PCMU/8000
a=rtpmap:8 PCMA/8000
a=rtpmap:101 telephone-event/8000
a=fmtp:101 0-16
a=ptime:20
a=sendrecv
`),
    );
  });

  it('offers L16 at 8 and 16 kHz with dynamic payload types when asked', () => {
    const text = session({ codecs: ['L16/16000', 'L16/8000', 'PCMU'] }).createOffer();
    expect(text).toContain('m=audio 20000 RTP/AVP 96 97 0 101 102\r\n');
    expect(text).toContain('a=rtpmap:96 L16/16000\r\na=rtpmap:97 L16/8000\r\n');
    expect(text).toContain('a=rtpmap:102 telephone-event/16000\r\n');
  });

  it('increments the o= version on each re-offer and keeps the session id', () => {
    const ours = session();
    const origins = [
      ours.createOffer(),
      ours.createOffer({ direction: 'sendonly' }),
      ours.createOffer({ port: 20002 }),
    ].map((text) => parseSessionDescription(text).origin);
    expect(origins.map((origin) => origin.sessionId)).toEqual(['4242', '4242', '4242']);
    expect(origins.map((origin) => origin.sessionVersion)).toEqual(['4242', '4243', '4244']);
  });

  it('puts the peer on hold with a=sendonly', () => {
    expect(session().createOffer({ direction: 'sendonly' })).toContain('a=sendonly\r\n');
  });
});

describe('reading the answer to our offer', () => {
  const answer = sdp(`
v=0
o=- 77 78 IN IP4 198.51.100.7
s=-
c=IN IP4 198.51.100.7
t=0 0
m=audio 30000 RTP/AVP 8 101
a=rtpmap:8 PCMA/8000
a=rtpmap:101 telephone-event/8000
a=fmtp:101 0-15
a=sendrecv
`);

  it('reads the chosen codec, address, port, telephone-event and direction', () => {
    const ours = session();
    ours.createOffer();
    const reading = ours.readAnswer(answer);
    expect(reading).toMatchObject({
      ok: true,
      audio: {
        remoteAddress: '198.51.100.7',
        remotePort: 30000,
        codec: { payloadType: 8, encoding: 'PCMA' },
        telephoneEvent: { payloadType: 101 },
        direction: 'sendrecv',
        heldByPeer: false,
      },
    });
    expect(ours.current).toEqual(reading.ok ? reading.audio : null);
  });

  it('reads an early answer (183) and still the 2xx answer after it, but no third', () => {
    const ours = session();
    ours.createOffer();
    expect(ours.readAnswer(answer, { early: true })).toMatchObject({ ok: true });
    const final = ours.readAnswer(answer.replace('m=audio 30000', 'm=audio 30002'));
    expect(final).toMatchObject({ ok: true, audio: { remotePort: 30002 } });
    expect(() => ours.readAnswer(answer)).toThrow('an answer came with no offer out');
  });

  it('reads a recvonly answer to our sendonly hold', () => {
    const ours = session();
    ours.createOffer({ direction: 'sendonly' });
    const reading = ours.readAnswer(answer.replace('a=sendrecv', 'a=recvonly'));
    expect(reading).toMatchObject({ ok: true, audio: { direction: 'sendonly' } });
  });

  it('reports a rejected audio stream as a result', () => {
    const ours = session();
    ours.createOffer();
    expect(ours.readAnswer(answer.replace('m=audio 30000', 'm=audio 0'))).toEqual({
      ok: false,
      reason: 'the answer rejected the audio stream',
    });
  });

  it('refuses answers that break RFC 3264', () => {
    const ours = session();
    ours.createOffer();
    expect(() => ours.readAnswer(answer + 'm=video 0 RTP/AVP 97\r\n')).toThrow(
      /2 m= lines but the offer had 1/,
    );
    ours.createOffer();
    expect(() =>
      ours.readAnswer(answer.replace('RTP/AVP 8 101', 'RTP/AVP 9').replace('8 PCMA', '9 G722')),
    ).toThrow(/G722\/8000, which was not offered/);
    expect(() => session().readAnswer(answer)).toThrow(/no offer out/);
  });
});

describe('changes on re-INVITE', () => {
  it('sees hold, resume, a move and a codec change', () => {
    const ours = session();
    const first = accepted(ours.answer(offer({}))).audio;
    const held = accepted(ours.answer(offer({ attributes: ['a=sendonly'] }))).audio;
    expect(sessionChanges(first, held)).toEqual([
      { kind: 'hold' },
      { kind: 'direction', direction: 'recvonly' },
    ]);
    const oldHold = accepted(ours.answer(offer({ connection: '0.0.0.0' }))).audio;
    expect(sessionChanges(first, oldHold).map((change) => change.kind)).toEqual([
      'hold',
      'direction',
    ]);
    const resumed = accepted(ours.answer(offer({}))).audio;
    expect(sessionChanges(held, resumed)).toEqual([
      { kind: 'resume' },
      { kind: 'direction', direction: 'sendrecv' },
    ]);
    const moved = accepted(ours.answer(offer({ connection: '203.0.113.9', port: 41000 }))).audio;
    expect(sessionChanges(first, moved)).toEqual([
      { kind: 'remote-address', address: '203.0.113.9', port: 41000 },
    ]);
    const recoded = accepted(ours.answer(offer({ formats: '8' }))).audio;
    expect(sessionChanges(first, recoded)).toEqual([
      { kind: 'codec', encoding: 'PCMA', payloadType: 8 },
      { kind: 'telephone-event', payloadType: null },
    ]);
    expect(sessionChanges(first, first)).toEqual([]);
  });
});

describe('the codec on a re-offer', () => {
  it('keeps the codec in use while the re-offer lists it, wherever it lists it', () => {
    const ours = session();
    expect(accepted(ours.answer(offer({ formats: '0 8 101' }))).audio.codec.encoding).toBe('PCMU');
    // A refresh or a hold listing PCMA first: the call stays on PCMU, and so does the answer.
    const refresh = accepted(ours.answer(offer({ formats: '8 0 101' })));
    expect(refresh.audio.codec.encoding).toBe('PCMU');
    expect(refresh.sdp).toMatch(/^m=audio 20000 RTP\/AVP 0 101\r$/m);
    const held = accepted(ours.answer(offer({ formats: '8 0 101', attributes: ['a=sendonly'] })));
    expect(held.audio.codec.encoding).toBe('PCMU');
    // An offer without it moves the call to what it lists, and that is kept from then on.
    expect(accepted(ours.answer(offer({ formats: '8 101' }))).audio.codec.encoding).toBe('PCMA');
    expect(accepted(ours.answer(offer({ formats: '0 8 101' }))).audio.codec.encoding).toBe('PCMA');
  });

  it("keeps the codec of the peer's answer to voxgate's offer", () => {
    const ours = session();
    ours.createOffer();
    ours.readAnswer(offer({ formats: '8 101' }));
    expect(accepted(ours.answer(offer({ formats: '0 8 101' }))).audio.codec.encoding).toBe('PCMA');
  });

  it("takes the offerer's first codec on a first offer", () => {
    expect(accepted(session().answer(offer({ formats: '8 0 101' }))).audio.codec.encoding).toBe(
      'PCMA',
    );
  });
});

describe('malformed SDP', () => {
  it.each([
    ['', /SDP body is empty/],
    ['o=- 1 1 IN IP4 a\r\n', /line 1: SDP must begin with "v=0"/],
    ['v=0\r\nhello\r\n', /line 2: "hello" is not a <type>=<value> line/],
    ['v=0\r\ns=-\r\n', /SDP has no o= line/],
    ['v=0\r\no=- x 1 IN IP4 a\r\n', /line 2: o= line must be/],
    [offer({}).replace('m=audio 40000', 'm=audio 70000'), /m= port 70000 is out of range/],
    [offer({}).replace('m=audio 40000', 'm=audio port'), /m= line must be/],
    [offer({ formats: '0 abc' }), /payload type "abc" is not a number from 0 to 127/],
    [offer({ formats: '0 200' }), /payload type "200"/],
    [offer({}).replace('c=IN IP4 203.0.113.5', 'c=IN XX 1'), /c= line must be/],
    [offer({}).replace('c=IN IP4 203.0.113.5\r\n', ''), /media stream 1 has no connection/],
    [offer({ attributes: ['a=rtpmap:96'] }), /a=rtpmap must be/],
    [offer({ attributes: ['a=rtpmap:96 opus'] }), /a=rtpmap must be/],
    [offer({ attributes: ['a=fmtp:101'] }), /a=fmtp must be/],
    [offer({ attributes: ['a=ptime:0'] }), /a=ptime must be a positive number/],
  ])('refuses %j', (text, message) => {
    expect(() => session().answer(text)).toThrow(SdpParseError);
    expect(() => parseSessionDescription(text)).toThrow(message);
  });

  it('accepts bare LF line ends', () => {
    const parsed = parseSessionDescription(SIPP_UAC.replace(/\r\n/g, '\n'));
    expect(parsed.streams[0]?.payloads[0]).toMatchObject({ encoding: 'PCMU', clockRate: 8000 });
  });
});

describe('parsing real-world SDP', () => {
  it('reads the SIPp, Asterisk and baresip offers', () => {
    const sipp = parseSessionDescription(SIPP_UAC);
    expect(sipp.origin).toEqual({
      username: 'user1',
      sessionId: '53655765',
      sessionVersion: '2353687637',
      address: '127.0.0.1',
    });
    expect(sipp.streams).toEqual([
      {
        index: 0,
        kind: 'audio',
        port: 6000,
        protocol: 'RTP/AVP',
        formats: ['0'],
        payloads: [{ payloadType: 0, encoding: 'PCMU', clockRate: 8000, channels: 1, fmtp: null }],
        address: '127.0.0.1',
        rtcpPort: 6001,
        ptime: null,
        direction: 'sendrecv',
      },
    ]);
    const asterisk = parseSessionDescription(ASTERISK);
    expect(asterisk.name).toBe('Asterisk');
    expect(asterisk.streams[0]?.payloads.map((p) => p.encoding)).toEqual([
      'G722',
      'PCMA',
      'PCMU',
      'GSM',
      'telephone-event',
    ]);
    const baresip = parseSessionDescription(BARESIP);
    expect(baresip.streams[0]?.payloads[0]).toMatchObject({ encoding: 'opus', channels: 2 });
    expect(baresip.streams[1]).toMatchObject({ kind: 'video', port: 24848, rtcpPort: 24849 });
  });

  it('keeps a 64-bit session id and version exact', () => {
    const text = SIPP_UAC.replace('53655765 2353687637', '18446744073709551615 9007199254740993');
    expect(parseSessionDescription(text).origin).toMatchObject({
      sessionId: '18446744073709551615',
      sessionVersion: '9007199254740993',
    });
  });

  it('gives a static payload type its RFC 3551 name without an rtpmap', () => {
    const text = SIPP_UAC.replace('a=rtpmap:0 PCMU/8000\r\n', '').replace('RTP/AVP 0', 'RTP/AVP 8');
    expect(accepted(session().answer(text)).audio.codec).toMatchObject({ encoding: 'PCMA' });
  });
});
