import { describe, expect, it } from 'vitest';
import { mediaUpdateFrom } from '../../../src/call/media-binding.js';
import { parseOpusParameters, type NegotiatedAudio } from '../../../src/sip/sdp/index.js';

function negotiated(encoding: string, clockRate: number, fmtp: string | null): NegotiatedAudio {
  return {
    streamIndex: 0,
    remoteAddress: '203.0.113.9',
    remotePort: 40000,
    remoteRtcpPort: 40001,
    codec: { payloadType: 111, encoding, clockRate, channels: 2, fmtp },
    telephoneEvent: null,
    ptime: 20,
    direction: 'sendrecv',
    heldByPeer: false,
  };
}

describe('the media an Opus answer settles', () => {
  it('runs the leg at 16 kHz, sending FEC and DTX as the peer asked, within its bitrate', () => {
    const update = mediaUpdateFrom(
      negotiated('opus', 48000, 'minptime=10;useinbandfec=1;usedtx=1;maxaveragebitrate=20000'),
    );
    expect(update.formats).toEqual([
      {
        encoding: 'opus',
        payloadType: 111,
        rate: 16000,
        opus: { bitrate: 20000, fec: true, dtx: true },
      },
    ]);
  });

  it('runs at 8 kHz for a peer that neither plays nor captures above it', () => {
    const narrow = 'maxplaybackrate=8000;sprop-maxcapturerate=8000';
    expect(mediaUpdateFrom(negotiated('opus', 48000, narrow)).formats?.[0]).toMatchObject({
      rate: 8000,
      opus: { bitrate: 24000, fec: false, dtx: false },
    });
    // Playing at 8 kHz but capturing wideband: what it sends is worth 16 kHz.
    const half = 'maxplaybackrate=8000';
    expect(mediaUpdateFrom(negotiated('opus', 48000, half)).formats?.[0]?.rate).toBe(16000);
  });
});

describe('parseOpusParameters (RFC 7587 6.1)', () => {
  it('reads every parameter, and takes the defaults for absent or unreadable ones', () => {
    expect(
      parseOpusParameters(
        'maxplaybackrate=16000; sprop-maxcapturerate=12000;stereo=1;useinbandfec=1;usedtx=1;maxaveragebitrate=32000;cbr=1',
      ),
    ).toEqual({
      maxPlaybackRate: 16000,
      maxCaptureRate: 12000,
      maxAverageBitrate: 32000,
      stereo: true,
      useInbandFec: true,
      useDtx: true,
    });
    const defaults = {
      maxPlaybackRate: 48000,
      maxCaptureRate: 48000,
      maxAverageBitrate: null,
      stereo: false,
      useInbandFec: false,
      useDtx: false,
    };
    expect(parseOpusParameters(null)).toEqual(defaults);
    expect(parseOpusParameters('maxplaybackrate=fast;stereo;=1;usedtx=2')).toEqual(defaults);
  });
});

/** What a browser's offer settles for a WebRTC leg. */
const BROWSER_TRANSPORT: NonNullable<NegotiatedAudio['transport']> = {
  mid: '0',
  remoteIce: { ufrag: 'Brws', pwd: 'browserpasswordbrowserpw' },
  remoteIceLite: false,
  remoteCandidates: [],
  remoteFingerprints: [
    { algorithm: 'sha-256', value: 'AB:CD' },
    { algorithm: 'sha-1', value: '01:02' },
  ],
  dtlsRole: 'client',
  localIce: { ufrag: 'Ours', pwd: 'ourpasswordourpassword' },
};

describe('the media a WebRTC exchange settles', () => {
  it("hands the media session the peer's ufrag, fingerprints as text, our DTLS role and our ICE credentials", () => {
    const update = mediaUpdateFrom({
      ...negotiated('opus', 48000, null),
      transport: BROWSER_TRANSPORT,
    });
    expect(update.webrtc).toEqual({
      localIce: { ufrag: 'Ours', pwd: 'ourpasswordourpassword' },
      remoteUfrag: 'Brws',
      remoteFingerprints: ['sha-256 AB:CD', 'sha-1 01:02'],
      role: 'client',
    });
    expect(mediaUpdateFrom(negotiated('opus', 48000, null)).webrtc).toBeUndefined();
  });
});

describe('the media an SDES exchange settles', () => {
  const keySalt = (fill: number) => new Uint8Array(30).fill(fill);

  it('keys an RTP/SAVP stream, and drops the keys when a re-offer settles on plain RTP', () => {
    const pcmu = {
      ...negotiated('PCMU', 8000, null),
      codec: { payloadType: 0, encoding: 'PCMU', clockRate: 8000, channels: 1, fmtp: null },
    };
    const secured = mediaUpdateFrom({
      ...pcmu,
      sdes: {
        suite: 'AES_CM_128_HMAC_SHA1_80',
        tag: 1,
        remoteKeySalt: keySalt(1),
        localKeySalt: keySalt(2),
      },
    });
    expect(secured.sdes).toEqual({
      suite: 'AES_CM_128_HMAC_SHA1_80',
      inbound: { masterKey: new Uint8Array(16).fill(1), masterSalt: new Uint8Array(14).fill(1) },
      outbound: { masterKey: new Uint8Array(16).fill(2), masterSalt: new Uint8Array(14).fill(2) },
    });
    // RTP/AVP: plain from now on (the media session ignores this on a leg without SDES).
    expect(mediaUpdateFrom(pcmu).sdes).toBeNull();
  });

  it('leaves SDES out of a WebRTC leg, whose keys come from DTLS', () => {
    const update = mediaUpdateFrom({
      ...negotiated('opus', 48000, null),
      transport: BROWSER_TRANSPORT,
    });
    expect(update).not.toHaveProperty('sdes');
  });
});
