import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  hostCandidate,
  parseSessionDescription,
  SdpParseError,
  SdpSession,
  type AcceptedOffer,
  type AnswerOutcome,
  type SdpSessionOptions,
} from '../../../../src/sip/sdp/index.js';
import { sdp } from './sdp-fixtures.js';

/** An offer Chromium 156 made for one fake-microphone track, gathered in full (as sip.js waits). */
const CHROMIUM = readFileSync(
  new URL('../../../../fixtures/sdp/chromium-offer.sdp', import.meta.url),
  'utf8',
);

const FINGERPRINT = {
  algorithm: 'sha-256',
  value:
    '0A:1B:2C:3D:4E:5F:60:71:82:93:A4:B5:C6:D7:E8:F9:0A:1B:2C:3D:4E:5F:60:71:82:93:A4:B5:C6:D7:E8:F9',
};
const ICE = { ufrag: 'Vx3qAbCd', pwd: 'voxgate0voxgate1voxgate2' };

function webrtcSession(options: Partial<SdpSessionOptions> = {}): SdpSession {
  return new SdpSession({
    address: '192.0.2.1',
    port: 20000,
    sessionId: '4242',
    webrtc: { ice: ICE, fingerprint: FINGERPRINT },
    ...options,
  });
}

function accepted(outcome: AnswerOutcome): AcceptedOffer {
  if (!outcome.ok) throw new Error(`expected an accepted offer, got 488: ${outcome.reason}`);
  return outcome;
}

/** The Chromium offer with `edit` applied to its text. */
const chromium = (edit: (text: string) => string = (text) => text): string => edit(CHROMIUM);

describe('reading a WebRTC offer', () => {
  it('reads what Chromium offers: BUNDLE, mid, ICE, candidates, DTLS, rtcp-mux, opus', () => {
    const offer = parseSessionDescription(CHROMIUM);
    expect(offer.bundle).toEqual(['0']);
    const [audio] = offer.streams;
    expect(audio).toMatchObject({
      kind: 'audio',
      protocol: 'UDP/TLS/RTP/SAVPF',
      direction: 'sendrecv',
    });
    expect(audio?.payloads[0]).toEqual({
      payloadType: 111,
      encoding: 'opus',
      clockRate: 48000,
      channels: 2,
      fmtp: 'minptime=10;useinbandfec=1',
    });
    const transport = audio!.transport!;
    expect(transport).toMatchObject({
      mid: '0',
      rtcpMux: true,
      iceOptions: ['trickle'],
      iceLite: false,
      endOfCandidates: false,
      setup: 'actpass',
    });
    expect(transport.ice?.ufrag).toMatch(/^[A-Za-z0-9+/]{4,}$/);
    expect(transport.ice?.pwd.length).toBeGreaterThanOrEqual(22);
    expect(transport.fingerprints).toHaveLength(1);
    expect(transport.fingerprints[0]?.algorithm).toBe('sha-256');
    expect(transport.fingerprints[0]?.value).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(transport.candidates.map((c) => [c.transport, c.type, c.component])).toEqual([
      ['udp', 'host', 1],
      ['udp', 'host', 1],
      ['tcp', 'host', 1],
      ['tcp', 'host', 1],
    ]);
    expect(transport.candidates[2]?.extensions.get('tcptype')).toBe('active');
  });

  it('reads a trickle offer (c=0.0.0.0, port 9, no candidates) as sendrecv, not as hold', () => {
    const trickle = chromium((text) =>
      text
        .replace(/^c=IN IP4 .*$/m, 'c=IN IP4 0.0.0.0')
        .replace(/^m=audio \d+/m, 'm=audio 9')
        .replace(/^a=candidate:.*\r\n/gm, ''),
    );
    const answer = accepted(webrtcSession().answer(trickle));
    expect(answer.audio.heldByPeer).toBe(false);
    expect(answer.audio.direction).toBe('sendrecv');
    expect(answer.audio.transport?.remoteCandidates).toEqual([]);
  });

  it('applies session-level ICE and DTLS attributes, as Firefox writes them', () => {
    const firefox = sdp(`
v=0
o=mozilla...THIS_IS_SDPARTA-99.0 5981364498727459010 0 IN IP4 0.0.0.0
s=-
t=0 0
a=fingerprint:sha-256 AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99
a=group:BUNDLE 0
a=ice-options:trickle
a=msid-semantic:WMS *
m=audio 9 UDP/TLS/RTP/SAVPF 109 9 0 8 101
c=IN IP4 0.0.0.0
a=sendrecv
a=ice-pwd:0123456789abcdef0123456789abcdef
a=ice-ufrag:89abcdef
a=mid:0
a=rtcp-mux
a=rtpmap:109 opus/48000/2
a=rtpmap:101 telephone-event/8000
a=setup:actpass
`);
    const answer = accepted(webrtcSession().answer(firefox));
    expect(answer.audio.transport).toMatchObject({
      mid: '0',
      remoteIce: { ufrag: '89abcdef', pwd: '0123456789abcdef0123456789abcdef' },
      remoteFingerprints: [{ algorithm: 'sha-256' }],
      dtlsRole: 'client',
    });
    expect(answer.audio.codec.payloadType).toBe(109);
  });

  it.each([
    ['a=candidate:1 1 udp 2130706431 192.0.2.9 typ host', 'a=candidate must be'],
    ['a=fingerprint:sha-256 not-hex', 'a=fingerprint must be'],
    ['a=setup:sometimes', 'a=setup must be'],
    ['a=ice-ufrag:ab', 'a=ice-ufrag must be'],
    ['a=ice-pwd:has spaces in it but is long', 'a=ice-pwd must be'],
  ])('refuses %s with its line', (line, message) => {
    const text = chromium((body) => body.replace('a=mid:0\r\n', `a=mid:0\r\n${line}\r\n`));
    expect(() => parseSessionDescription(text)).toThrow(SdpParseError);
    expect(() => parseSessionDescription(text)).toThrow(message);
  });
});

describe('answering a WebRTC offer', () => {
  it('answers Chromium with ice-lite, our credentials and candidate, setup:active and opus', () => {
    const answer = accepted(webrtcSession().answer(CHROMIUM));
    const lines = answer.sdp.split('\r\n');
    expect(lines).toEqual([
      'v=0',
      'o=voxgate 4242 4242 IN IP4 192.0.2.1',
      's=-',
      'c=IN IP4 192.0.2.1',
      't=0 0',
      'a=group:BUNDLE 0',
      'a=ice-lite',
      'm=audio 20000 UDP/TLS/RTP/SAVPF 111 110',
      'a=mid:0',
      `a=ice-ufrag:${ICE.ufrag}`,
      `a=ice-pwd:${ICE.pwd}`,
      `a=fingerprint:sha-256 ${FINGERPRINT.value}`,
      'a=setup:active',
      'a=rtcp-mux',
      'a=candidate:1 1 UDP 2130706431 192.0.2.1 20000 typ host',
      'a=end-of-candidates',
      'a=rtpmap:111 opus/48000/2',
      'a=rtpmap:110 telephone-event/48000',
      // voxgate's own receiving parameters (RFC 7587 7), not the offer's echoed.
      'a=fmtp:111 minptime=10;useinbandfec=1;maxplaybackrate=16000;sprop-maxcapturerate=16000',
      'a=fmtp:110 0-15',
      'a=ptime:20',
      'a=sendrecv',
      '',
    ]);
    expect(answer.audio.codec).toMatchObject({ encoding: 'opus', clockRate: 48000, channels: 2 });
    expect(answer.audio.telephoneEvent?.payloadType).toBe(110);
    expect(answer.audio.transport?.dtlsRole).toBe('client');
    expect(answer.audio.transport?.remoteIce).toEqual(
      parseSessionDescription(CHROMIUM).streams[0]?.transport?.ice,
    );
  });

  it('answers a re-offer that restarts ICE with new credentials, and one that does not with the same', () => {
    const fresh = { ufrag: 'N3wUfrag', pwd: 'newpassword0newpassword1' };
    const session = webrtcSession({
      webrtc: { ice: ICE, fingerprint: FINGERPRINT, freshIce: () => fresh },
    });
    const first = accepted(session.answer(CHROMIUM));
    expect(first.audio.transport?.localIce).toEqual(ICE);
    // The same credentials again (a re-INVITE for hold or a codec change): no restart.
    const again = accepted(session.answer(CHROMIUM));
    expect(again.sdp).toContain(`a=ice-ufrag:${ICE.ufrag}\r\na=ice-pwd:${ICE.pwd}\r\n`);
    expect(again.audio.transport?.localIce).toEqual(ICE);
    // RFC 8445 9: the browser restarts with a new ufrag and pwd; the answer carries new ones.
    const restart = chromium((text) =>
      text
        .replace(/a=ice-ufrag:.*\r\n/, 'a=ice-ufrag:r3st\r\n')
        .replace(/a=ice-pwd:.*\r\n/, 'a=ice-pwd:restartedrestartedrestart\r\n'),
    );
    const restarted = accepted(session.answer(restart));
    expect(restarted.sdp).toContain(`a=ice-ufrag:${fresh.ufrag}\r\na=ice-pwd:${fresh.pwd}\r\n`);
    expect(restarted.sdp).not.toContain(ICE.ufrag);
    expect(restarted.audio.transport).toMatchObject({
      localIce: fresh,
      remoteIce: { ufrag: 'r3st', pwd: 'restartedrestartedrestart' },
      dtlsRole: 'client',
    });
    // Our later offers carry the new credentials too.
    expect(session.createOffer()).toContain(`a=ice-ufrag:${fresh.ufrag}\r\n`);
  });

  it('answers PCMU with telephone-event/8000 when opus is not among the codecs', () => {
    const answer = accepted(webrtcSession({ codecs: ['PCMU', 'PCMA'] }).answer(CHROMIUM));
    expect(answer.sdp).toContain('m=audio 20000 UDP/TLS/RTP/SAVPF 0 126\r\n');
    expect(answer.sdp).toContain('a=rtpmap:126 telephone-event/8000\r\n');
  });

  it.each([
    ['actpass', 'active', 'client'],
    ['active', 'passive', 'server'],
    ['passive', 'active', 'client'],
  ])('answers a=setup:%s with %s, as the DTLS %s', (offered, ours, role) => {
    const answer = accepted(
      webrtcSession().answer(
        chromium((text) => text.replace('a=setup:actpass', `a=setup:${offered}`)),
      ),
    );
    expect(answer.sdp).toContain(`a=setup:${ours}\r\n`);
    expect(answer.audio.transport?.dtlsRole).toBe(role);
  });

  it.each(['RTP/SAVPF', 'UDP/TLS/RTP/SAVP'])(
    'takes %s and answers with the same profile',
    (profile) => {
      const answer = accepted(
        webrtcSession().answer(chromium((text) => text.replace('UDP/TLS/RTP/SAVPF', profile))),
      );
      expect(answer.sdp).toContain(`m=audio 20000 ${profile} 111 110\r\n`);
    },
  );

  it('rejects video and data channel m-lines with port 0, keeping their mids out of BUNDLE', () => {
    const withVideo = chromium(
      (text) =>
        text.replace('a=group:BUNDLE 0', 'a=group:BUNDLE 0 1 2') +
        'm=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=mid:1\r\na=rtcp-mux\r\na=rtpmap:96 VP8/90000\r\n' +
        'm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:2\r\na=sctp-port:5000\r\n',
    );
    const answer = accepted(webrtcSession().answer(withVideo));
    const text = answer.sdp;
    expect(text).toContain('a=group:BUNDLE 0\r\n');
    expect(text).toContain('m=video 0 UDP/TLS/RTP/SAVPF 96\r\na=mid:1\r\n');
    expect(text).toContain('m=application 0 UDP/DTLS/SCTP webrtc-datachannel\r\na=mid:2\r\n');
    expect(text.match(/^m=/gm)).toHaveLength(3);
  });

  it.each([
    ['a=rtcp-mux', /a=rtcp-mux\r\n/, 'no a=rtcp-mux, which voxgate requires'],
    ['a=fingerprint', /a=fingerprint:.*\r\n/, 'no a=fingerprint'],
    ['the ICE credentials', /a=ice-(ufrag|pwd):.*\r\n/g, 'no a=ice-ufrag and a=ice-pwd'],
  ])('answers 488 to an offer without %s', (_name, pattern, reason) => {
    const outcome = webrtcSession().answer(chromium((text) => text.replace(pattern, '')));
    expect(outcome).toEqual({ ok: false, status: 488, reason: expect.stringContaining(reason) });
  });

  it('answers 488 to an ICE-lite offer: with two lite agents neither checks (RFC 8445 2.5)', () => {
    const lite = chromium((text) => text.replace('a=group:BUNDLE', 'a=ice-lite\r\na=group:BUNDLE'));
    expect(webrtcSession().answer(lite)).toEqual({
      ok: false,
      status: 488,
      reason: expect.stringContaining('from an ICE-lite agent (a=ice-lite)'),
    });
  });

  it('keeps plain legs plain: a WebRTC offer to a plain leg, and a plain offer to a WebRTC leg, get 488', () => {
    const plain = new SdpSession({ address: '192.0.2.1', port: 20000 });
    expect(plain.answer(CHROMIUM)).toEqual({
      ok: false,
      status: 488,
      reason: 'the offer has no RTP/AVP audio stream',
    });
    const rtpAvp = sdp(`
v=0
o=- 1 1 IN IP4 203.0.113.5
s=-
c=IN IP4 203.0.113.5
t=0 0
m=audio 40000 RTP/AVP 0
`);
    expect(webrtcSession().answer(rtpAvp)).toEqual({
      ok: false,
      status: 488,
      reason: 'the offer has no WebRTC (UDP/TLS/RTP/SAVPF) audio stream',
    });
  });
});

describe('offering to a WebRTC endpoint', () => {
  it('offers UDP/TLS/RTP/SAVPF with ice-lite, actpass, BUNDLE, opus, PCMU, PCMA and both DTMF rates', () => {
    const offer = webrtcSession().createOffer();
    expect(offer.split('\r\n')).toEqual([
      'v=0',
      'o=voxgate 4242 4242 IN IP4 192.0.2.1',
      's=-',
      'c=IN IP4 192.0.2.1',
      't=0 0',
      'a=group:BUNDLE 0',
      'a=ice-lite',
      'm=audio 20000 UDP/TLS/RTP/SAVPF 111 0 8 101 110',
      'a=mid:0',
      `a=ice-ufrag:${ICE.ufrag}`,
      `a=ice-pwd:${ICE.pwd}`,
      `a=fingerprint:sha-256 ${FINGERPRINT.value}`,
      'a=setup:actpass',
      'a=rtcp-mux',
      'a=candidate:1 1 UDP 2130706431 192.0.2.1 20000 typ host',
      'a=end-of-candidates',
      'a=rtpmap:111 opus/48000/2',
      'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:8 PCMA/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=rtpmap:110 telephone-event/48000',
      'a=fmtp:111 minptime=10;useinbandfec=1;maxplaybackrate=16000;sprop-maxcapturerate=16000',
      'a=fmtp:101 0-16',
      'a=fmtp:110 0-16',
      'a=ptime:20',
      'a=sendrecv',
      '',
    ]);
  });

  const browserAnswer = (setup: string, extra = '') =>
    sdp(`
v=0
o=- 5 2 IN IP4 127.0.0.1
s=-
t=0 0
a=group:BUNDLE 0
m=audio 9 UDP/TLS/RTP/SAVPF 111 110
c=IN IP4 0.0.0.0
a=ice-ufrag:brws
a=ice-pwd:browserbrowserbrowser12
a=fingerprint:sha-256 ${FINGERPRINT.value}
a=setup:${setup}
a=mid:0
a=rtcp-mux
a=rtpmap:111 opus/48000/2
a=rtpmap:110 telephone-event/48000
a=sendrecv
${extra}`);

  it('reads the browser answer: its credentials, fingerprint and our DTLS role', () => {
    const ours = webrtcSession();
    ours.createOffer();
    const reading = ours.readAnswer(browserAnswer('active'));
    if (!reading.ok) throw new Error(reading.reason);
    expect(reading.audio.codec.encoding).toBe('opus');
    expect(reading.audio.heldByPeer).toBe(false);
    expect(reading.audio.transport).toMatchObject({
      mid: '0',
      remoteIce: { ufrag: 'brws', pwd: 'browserbrowserbrowser12' },
      dtlsRole: 'server',
    });
  });

  it("answers the browser's later re-offer of actpass with the role voxgate holds, not the other", () => {
    // voxgate called the browser, which answered active: voxgate is the DTLS server.
    const ours = webrtcSession();
    ours.createOffer();
    const reading = ours.readAnswer(browserAnswer('active'));
    if (!reading.ok) throw new Error(reading.reason);
    // Its re-INVITE (hold, an ICE restart) offers actpass, as browsers do, with the same
    // certificate: the association carries on, so the answer keeps voxgate the server
    // (passive), whatever a first answer does.
    const sameCertificate = (edit: (text: string) => string = (text) => text) =>
      chromium((text) =>
        edit(
          text.replace(/a=fingerprint:sha-256 \S+/, `a=fingerprint:sha-256 ${FINGERPRINT.value}`),
        ),
      );
    const reoffer = accepted(ours.answer(sameCertificate()));
    expect(reoffer.sdp).toContain('a=setup:passive\r\n');
    expect(reoffer.audio.transport?.dtlsRole).toBe('server');
    // A re-offer that takes a role itself is answered with the other.
    const active = accepted(
      ours.answer(sameCertificate((text) => text.replace('a=setup:actpass', 'a=setup:active'))),
    );
    expect(active.sdp).toContain('a=setup:passive\r\n');
    // Another certificate (a new peer connection) needs a new association, negotiated as a
    // first one is: active.
    const renewed = accepted(ours.answer(chromium()));
    expect(renewed.sdp).toContain('a=setup:active\r\n');
    expect(renewed.audio.transport?.dtlsRole).toBe('client');
    // Where voxgate answered first (active, the client), a re-offer of actpass stays active.
    const answerer = webrtcSession();
    accepted(answerer.answer(chromium()));
    expect(accepted(answerer.answer(chromium())).sdp).toContain('a=setup:active\r\n');
  });

  it('reads an answer without a=setup as passive (RFC 4145 4.1): voxgate is then the DTLS client', () => {
    const ours = webrtcSession();
    ours.createOffer();
    const reading = ours.readAnswer(browserAnswer('active').replace('a=setup:active\r\n', ''));
    if (!reading.ok) throw new Error(reading.reason);
    expect(reading.audio.transport?.dtlsRole).toBe('client');
  });

  it('refuses an answer of actpass, or one without DTLS', () => {
    const ours = webrtcSession();
    ours.createOffer();
    expect(() => ours.readAnswer(browserAnswer('actpass'), { early: true })).toThrow(
      'the answer has a=setup:actpass',
    );
    const bare = browserAnswer('active').replace(/a=fingerprint:.*\r\n/, '');
    expect(() => ours.readAnswer(bare)).toThrow(SdpParseError);
  });

  it('makes a host candidate of an IP address only', () => {
    expect(hostCandidate('2001:db8::1', 20002).priority).toBe(2130706431);
    expect(() => webrtcSession({ address: 'gw.example.org' })).toThrow(
      'Expected an IP address for a WebRTC candidate (VOXGATE_PUBLIC_HOST) but received "gw.example.org"',
    );
    expect(() =>
      webrtcSession({ webrtc: { ice: ICE, fingerprint: { algorithm: 'sha-256', value: 'xy' } } }),
    ).toThrow('Expected a fingerprint');
  });
});
