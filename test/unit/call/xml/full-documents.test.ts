import { describe, expect, it } from 'vitest';
import { parseAnswerXml } from '../../../../src/call/xml/parse-answer-xml.js';

describe('parseAnswerXml: realistic documents', () => {
  it('an IVR menu: GetDigits with prompts, then a fallback Speak and Redirect', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<Response>
  <GetDigits action="https://ivr.example.com/menu/choice?lang=en&amp;step=1" method="POST"
             timeout="7" numDigits="1" retries="2" validDigits="123"
             invalidDigitsSound="https://ivr.example.com/sounds/invalid.mp3">
    <Speak language="en-GB" voice="MAN">Welcome to Example. Press 1 for sales,
      2 for support, <emphasis>3</emphasis> to hear this again.</Speak>
    <Wait length="2"/>
  </GetDigits>
  <Speak>We did not receive your choice. Goodbye.</Speak>
  <Redirect method="GET">https://ivr.example.com/menu/timeout</Redirect>
</Response>`;
    expect(parseAnswerXml(xml)).toEqual({
      instructions: [
        {
          kind: 'GetDigits',
          action: 'https://ivr.example.com/menu/choice?lang=en&step=1',
          method: 'POST',
          timeout: 7,
          digitTimeout: 2,
          finishOnKey: '#',
          numDigits: 1,
          retries: 2,
          invalidDigitsSound: 'https://ivr.example.com/sounds/invalid.mp3',
          validDigits: '123',
          playBeep: false,
          redirect: true,
          prompts: [
            {
              kind: 'Speak',
              voice: 'MAN',
              language: 'en-GB',
              loop: 1,
              ssml: 'Welcome to Example. Press 1 for sales,\n      2 for support, <emphasis>3</emphasis> to hear this again.',
              text: 'Welcome to Example. Press 1 for sales, 2 for support, 3 to hear this again.',
            },
            { kind: 'Wait', length: 2, silence: false, minSilence: 2000, beep: false },
          ],
        },
        {
          kind: 'Speak',
          voice: 'WOMAN',
          language: 'en-US',
          loop: 1,
          ssml: 'We did not receive your choice. Goodbye.',
          text: 'We did not receive your choice. Goodbye.',
        },
        { kind: 'Redirect', url: 'https://ivr.example.com/menu/timeout', method: 'GET' },
      ],
    });
  });

  it('a forward: Speak, then Dial to a number and a SIP user with an action URL', () => {
    const xml = `<Response>
  <Speak>Connecting you now.</Speak>
  <Dial action="https://app.example.com/dial-status" timeout="25" callerId="+14155550100"
        callerName="Example Inc" sipHeaders="Account=42,Route=east">
    <Number sendDigits="wwww1234">+14155550123</Number>
    <User sipHeaders="Priority=high">sip:agent7@pbx.example.com</User>
  </Dial>
  <Speak>The agent did not answer.</Speak>
  <Hangup/>
</Response>`;
    const { instructions } = parseAnswerXml(xml);
    expect(instructions.map((i) => i.kind)).toEqual(['Speak', 'Dial', 'Speak', 'Hangup']);
    expect(instructions[1]).toMatchObject({
      kind: 'Dial',
      action: 'https://app.example.com/dial-status',
      timeout: 25,
      callerId: '+14155550100',
      callerName: 'Example Inc',
      sipHeaders: { Account: '42', Route: 'east' },
      targets: [
        { kind: 'Number', number: '+14155550123', sendDigits: 'wwww1234' },
        { kind: 'User', uri: 'sip:agent7@pbx.example.com', sipHeaders: { Priority: 'high' } },
      ],
    });
  });

  it('early media: PreAnswer with Speak, Play, DTMF and Message, then the answered call', () => {
    const xml = `<Response>
  <PreAnswer>
    <Speak language="es-US">Un momento, por favor.</Speak>
    <Play loop="2">https://cdn.example.com/ring.wav</Play>
    <DTMF async="false">1w2</DTMF>
    <Message src="+14155550100" dst="+14155550123" type="sms">Calling you</Message>
    <Wait length="3"/>
  </PreAnswer>
  <Speak>Thanks for waiting.</Speak>
  <Hangup schedule="30" reason="rejected"/>
</Response>`;
    const { instructions } = parseAnswerXml(xml);
    expect(instructions).toEqual([
      {
        kind: 'PreAnswer',
        instructions: [
          {
            kind: 'Speak',
            voice: 'WOMAN',
            language: 'es-US',
            loop: 1,
            ssml: 'Un momento, por favor.',
            text: 'Un momento, por favor.',
          },
          { kind: 'Play', url: 'https://cdn.example.com/ring.wav', loop: 2 },
          { kind: 'DTMF', digits: '1w2', async: false },
          {
            kind: 'Message',
            attributes: { src: '+14155550100', dst: '+14155550123', type: 'sms' },
            text: 'Calling you',
          },
          { kind: 'Wait', length: 3, silence: false, minSilence: 2000, beep: false },
        ],
      },
      {
        kind: 'Speak',
        voice: 'WOMAN',
        language: 'en-US',
        loop: 1,
        ssml: 'Thanks for waiting.',
        text: 'Thanks for waiting.',
      },
      { kind: 'Hangup', schedule: 30, reason: 'rejected' },
    ]);
  });

  it('a voice-AI call: a bidirectional Stream that keeps the call alive, then a goodbye', () => {
    const xml = `<Response>
  <Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-l16;rate=16000"
          streamTimeout="3600" statusCallbackUrl="https://ai.example.com/stream-events"
          extraHeaders="agentId=support-bot,locale=en-US" noiseCancellation="true"
          noiseCancellationLevel="90">wss://ai.example.com/v1/media?token=abc&amp;x=1</Stream>
  <Speak>Goodbye.</Speak>
</Response>`;
    const { instructions } = parseAnswerXml(xml);
    expect(instructions[0]).toEqual({
      kind: 'Stream',
      url: 'wss://ai.example.com/v1/media?token=abc&x=1',
      bidirectional: true,
      audioTrack: 'inbound',
      streamTimeout: 3600,
      statusCallbackUrl: 'https://ai.example.com/stream-events',
      statusCallbackMethod: 'POST',
      contentType: 'audio/x-l16;rate=16000',
      extraHeaders: { agentId: 'support-bot', locale: 'en-US' },
      keepCallAlive: true,
      noiseCancellation: true,
      noiseCancellationLevel: 90,
    });
    expect(instructions[1]).toMatchObject({ kind: 'Speak', text: 'Goodbye.' });
  });

  it('one bad element deep in a long document fails the whole document', () => {
    const xml = `<Response>
  <Speak>Hello</Speak>
  <GetDigits action="https://e.com/a"><Speak>Menu</Speak></GetDigits>
  <Dial><Number>+14155550100</Number><User>sip:a@b.com</User><Number callerName="x">123</Number><Number badAttr="1">456</Number></Dial>
</Response>`;
    expect(() => parseAnswerXml(xml)).toThrow(
      'Number: attribute "badAttr" is not allowed (allowed: sendDigits, sendOnPreanswer, callerId, callerName)',
    );
  });
});
