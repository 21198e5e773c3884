/** SDP bodies as real user agents send them, with documentation addresses. */
export function sdp(text: string): string {
  return text.replace(/^\n/, '').replace(/\r?\n/g, '\r\n');
}

/** SIPp's built-in uac scenario, with its keywords filled in. */
export const SIPP_UAC = sdp(`
v=0
o=user1 53655765 2353687637 IN IP4 127.0.0.1
s=-
c=IN IP4 127.0.0.1
t=0 0
m=audio 6000 RTP/AVP 0
a=rtpmap:0 PCMU/8000
`);

/** SIPp's built-in uac_pcap scenario (A-law with RFC 2833 DTMF). */
export const SIPP_UAC_PCAP = sdp(`
v=0
o=user1 53655765 2353687637 IN IP4 127.0.0.1
s=-
c=IN IP4 127.0.0.1
t=0 0
m=audio 6002 RTP/AVP 8 101
a=rtpmap:8 PCMA/8000
a=rtpmap:101 telephone-event/8000
a=fmtp:101 0-11,16
`);

/** What Asterisk (chan_pjsip) typically offers. */
export const ASTERISK = sdp(`
v=0
o=- 1718034123 1718034123 IN IP4 192.0.2.10
s=Asterisk
c=IN IP4 192.0.2.10
t=0 0
m=audio 10250 RTP/AVP 9 8 0 3 101
a=rtpmap:9 G722/8000
a=rtpmap:8 PCMA/8000
a=rtpmap:0 PCMU/8000
a=rtpmap:3 GSM/8000
a=rtpmap:101 telephone-event/8000
a=fmtp:101 0-16
a=ptime:20
a=maxptime:150
a=sendrecv
`);

/** What baresip typically offers: opus first, audio and video, RTCP port given. */
export const BARESIP = sdp(`
v=0
o=- 2890844526 2890842807 IN IP4 198.51.100.7
s=-
c=IN IP4 198.51.100.7
b=AS:2048
t=0 0
m=audio 24846 RTP/AVP 96 0 8 100
b=AS:512
a=rtpmap:96 opus/48000/2
a=fmtp:96 stereo=1;sprop-stereo=1
a=rtpmap:0 PCMU/8000
a=rtpmap:8 PCMA/8000
a=rtpmap:100 telephone-event/8000
a=fmtp:100 0-15
a=rtcp:24851
a=sendrecv
a=label:1
a=ssrc:4044321387 cname:a1b2c3
a=rtcp-rsize
m=video 24848 RTP/AVP 97
a=rtpmap:97 H264/90000
a=fmtp:97 packetization-mode=0
a=sendrecv
`);

/** An audio offer with one line changed by `edit`. */
export function offer(options: {
  formats?: string;
  attributes?: string[];
  connection?: string;
  port?: number;
  extra?: string;
}): string {
  const formats = options.formats ?? '0 8 101';
  const lines = [
    'v=0',
    'o=peer 1 1 IN IP4 203.0.113.5',
    's=-',
    `c=IN IP4 ${options.connection ?? '203.0.113.5'}`,
    't=0 0',
    `m=audio ${options.port ?? 40000} RTP/AVP ${formats}`,
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:8 PCMA/8000',
    'a=rtpmap:101 telephone-event/8000',
    'a=fmtp:101 0-15',
    ...(options.attributes ?? []),
  ];
  return lines.join('\r\n') + '\r\n' + (options.extra ?? '');
}
