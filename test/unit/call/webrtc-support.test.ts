import { describe, expect, it } from 'vitest';
import {
  loadWebrtcSupport,
  offersWebrtc,
  webrtcLegTransport,
} from '../../../src/call/webrtc-support.js';

const support = loadWebrtcSupport({
  dtls: { certificateFiles: null, handshakeTimeoutMs: 10_000, consentTimeoutMs: 30_000 },
});

const offer = (profile: string) =>
  ['v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0']
    .concat([`m=audio 9 ${profile} 111`, 'a=rtpmap:111 opus/48000/2', ''])
    .join('\r\n');

describe('WebRTC legs in the call layer', () => {
  it('tells a WebRTC offer from a plain one, and not-SDP from neither', () => {
    expect(offersWebrtc(offer('UDP/TLS/RTP/SAVPF'))).toBe(true);
    expect(offersWebrtc(offer('RTP/SAVPF'))).toBe(true);
    expect(offersWebrtc(offer('RTP/AVP'))).toBe(false);
    expect(offersWebrtc('hello')).toBe(false);
  });

  it('gives each leg fresh ICE credentials and the one certificate fingerprint', () => {
    const a = webrtcLegTransport(support, '192.0.2.1');
    const b = webrtcLegTransport(support, '192.0.2.1');
    if (typeof a === 'string' || typeof b === 'string') throw new Error('expected transports');
    expect(a.spec.localIce).toBe(a.sdp.ice);
    expect(a.sdp.ice.ufrag).not.toBe(b.sdp.ice.ufrag);
    expect(a.sdp.fingerprint).toEqual(support.fingerprint);
    expect(support.media.certificate.sdpFingerprint).toBe(`sha-256 ${support.fingerprint.value}`);
  });

  it('refuses a WebRTC leg when VOXGATE_PUBLIC_HOST is a name or there is no certificate', () => {
    expect(webrtcLegTransport(support, 'gw.example.com')).toBe(
      'WebRTC calls need VOXGATE_PUBLIC_HOST to be an IP address (it is "gw.example.com")',
    );
    expect(webrtcLegTransport(undefined, '192.0.2.1')).toMatch(/no DTLS certificate/);
  });
});
