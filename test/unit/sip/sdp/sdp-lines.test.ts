import { describe, expect, it } from 'vitest';
import { parseSessionDescription, SdpSession } from '../../../../src/sip/sdp/index.js';
import { sdp, SIPP_UAC } from './sdp-fixtures.js';

describe('reading the lines of a body', () => {
  it('takes the address of a c= line without its TTL or address count', () => {
    const text = SIPP_UAC.replace('c=IN IP4 127.0.0.1', 'c=IN IP4 224.2.1.1/127/3');
    expect(parseSessionDescription(text).streams[0]?.address).toBe('224.2.1.1');
  });

  it('reads the port of an m= line that also gives a port count', () => {
    const text = SIPP_UAC.replace('m=audio 6000 RTP/AVP 0', 'm=audio 7000/2 RTP/AVP 0 8');
    expect(parseSessionDescription(text).streams[0]).toMatchObject({
      port: 7000,
      rtcpPort: 7001,
      formats: ['0', '8'],
    });
  });

  it('reads a=rtcp with or without an address, and ignores one without a port', () => {
    const withAddress = `${SIPP_UAC}a=rtcp:6101 IN IP4 192.0.2.9\r\n`;
    expect(parseSessionDescription(withAddress).streams[0]?.rtcpPort).toBe(6101);
    expect(parseSessionDescription(`${SIPP_UAC}a=rtcp:\r\n`).streams[0]?.rtcpPort).toBe(6001);
  });

  it('lets a media-level direction and c= override the session-level ones', () => {
    const text = sdp(`
v=0
o=- 1 1 IN IP4 192.0.2.1
s=-
c=IN IP4 192.0.2.1
t=0 0
a=sendonly
m=audio 5000 RTP/AVP 0
m=audio 5002 RTP/AVP 0
c=IN IP6 2001:db8::5
a=inactive
`);
    const streams = parseSessionDescription(text).streams;
    expect(streams.map((stream) => [stream.address, stream.direction])).toEqual([
      ['192.0.2.1', 'sendonly'],
      ['2001:db8::5', 'inactive'],
    ]);
  });

  it('keeps the first rtpmap and fmtp of a payload type and ignores attributes it does not know', () => {
    const text = `${SIPP_UAC}a=rtpmap:0 PCMA/8000\r\na=fmtp:0 a=1\r\na=fmtp:0 b=2\r\na=sendrecvX\r\na=mid:0\r\n`;
    const stream = parseSessionDescription(text.replace('a=rtpmap:0', 'a=recvonly\r\na=rtpmap:0'))
      .streams[0];
    expect(stream?.payloads).toEqual([
      { payloadType: 0, encoding: 'PCMU', clockRate: 8000, channels: 1, fmtp: 'a=1' },
    ]);
    expect(stream?.direction).toBe('recvonly');
  });

  it('reads a direction attribute written with trailing blanks', () => {
    expect(parseSessionDescription(`${SIPP_UAC}a=sendonly \r\n`).streams[0]?.direction).toBe(
      'sendonly',
    );
  });

  it('reads back what it writes, over IPv6 too', () => {
    const ours = new SdpSession({ address: '2001:db8::1', port: 30000, sessionId: '7' });
    const text = ours.createOffer({ direction: 'sendonly' });
    expect(text).toMatch(
      /^v=0\r\no=voxgate 7 7 IN IP6 2001:db8::1\r\ns=-\r\nc=IN IP6 2001:db8::1\r\n/,
    );
    expect(parseSessionDescription(text).streams[0]).toMatchObject({
      address: '2001:db8::1',
      port: 30000,
      direction: 'sendonly',
      ptime: 20,
    });
  });
});
