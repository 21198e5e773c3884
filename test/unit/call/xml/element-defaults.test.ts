import { describe, expect, it } from 'vitest';
import { parseAnswerXml } from '../../../../src/call/xml/parse-answer-xml.js';
import type { ResponseInstruction } from '../../../../src/call/xml/answer-document.js';

function only(body: string): ResponseInstruction {
  const { instructions } = parseAnswerXml(`<Response>${body}</Response>`);
  expect(instructions).toHaveLength(1);
  return instructions[0] as ResponseInstruction;
}

describe('parseAnswerXml: each element with its defaults', () => {
  it('reads an empty Response as no instructions', () => {
    expect(parseAnswerXml('<Response/>')).toEqual({ instructions: [] });
    expect(parseAnswerXml('<?xml version="1.0"?>\n<!-- hi -->\n<Response>\n</Response>\n')).toEqual(
      { instructions: [] },
    );
  });

  it('Speak: WOMAN, en-US, loop 1', () => {
    expect(only('<Speak>Hello there</Speak>')).toEqual({
      kind: 'Speak',
      voice: 'WOMAN',
      language: 'en-US',
      loop: 1,
      ssml: 'Hello there',
      text: 'Hello there',
    });
    expect(only('<Speak voice="MAN" language="de-DE" loop="0">Hallo</Speak>')).toMatchObject({
      voice: 'MAN',
      language: 'de-DE',
      loop: 0,
    });
    expect(only('<Speak language="hi-IN">Namaste</Speak>')).toMatchObject({
      voice: 'WOMAN',
      language: 'hi-IN',
    });
  });

  it('Play: loop 1, the URL as written', () => {
    expect(only('<Play>https://example.com/a.mp3?x=1&amp;y=2</Play>')).toEqual({
      kind: 'Play',
      url: 'https://example.com/a.mp3?x=1&y=2',
      loop: 1,
    });
    expect(only('<Play loop="3"> http://example.com/a.wav </Play>')).toMatchObject({
      url: 'http://example.com/a.wav',
      loop: 3,
    });
  });

  it('Wait: 1 s, no silence detection, minSilence 2000 ms, no beep', () => {
    expect(only('<Wait/>')).toEqual({
      kind: 'Wait',
      length: 1,
      silence: false,
      minSilence: 2000,
      beep: false,
    });
    expect(only('<Wait length="10" silence="true" minSilence="3000" beep="true"/>')).toEqual({
      kind: 'Wait',
      length: 10,
      silence: true,
      minSilence: 3000,
      beep: true,
    });
  });

  it('Hangup: at once, no reason', () => {
    expect(only('<Hangup/>')).toEqual({ kind: 'Hangup', schedule: 0, reason: null });
    expect(only('<Hangup schedule="60" reason="busy"/>')).toEqual({
      kind: 'Hangup',
      schedule: 60,
      reason: 'busy',
    });
  });

  it('Redirect: POST', () => {
    expect(only('<Redirect>https://example.com/next</Redirect>')).toEqual({
      kind: 'Redirect',
      url: 'https://example.com/next',
      method: 'POST',
    });
    expect(only('<Redirect method="GET">https://example.com/next</Redirect>')).toMatchObject({
      method: 'GET',
    });
  });

  it('DTMF: digits from the text or the digits attribute, async by default', () => {
    expect(only('<DTMF>12w#</DTMF>')).toEqual({ kind: 'DTMF', digits: '12w#', async: true });
    expect(only('<DTMF digits="0*9" async="false"/>')).toEqual({
      kind: 'DTMF',
      digits: '0*9',
      async: false,
    });
  });

  it('GetDigits: the documented defaults and no prompts', () => {
    expect(only('<GetDigits/>')).toEqual({
      kind: 'GetDigits',
      action: null,
      method: 'POST',
      timeout: 5,
      digitTimeout: 2,
      finishOnKey: '#',
      numDigits: 99,
      retries: 1,
      invalidDigitsSound: null,
      validDigits: '1234567890*#',
      playBeep: false,
      redirect: true,
      prompts: [],
    });
  });

  it('GetDigits: every attribute set; finishOnKey "" and "none" mean no key', () => {
    const xml = `<GetDigits action="https://example.com/digits" method="GET" timeout="10"
      digitTimeout="3" finishOnKey="*" numDigits="4" retries="3"
      invalidDigitsSound="https://example.com/invalid.wav" validDigits="123" playBeep="true"
      redirect="false"><Speak>Enter your PIN</Speak><Wait length="2"/><Play>https://example.com/p.wav</Play></GetDigits>`;
    expect(only(xml)).toMatchObject({
      action: 'https://example.com/digits',
      method: 'GET',
      timeout: 10,
      digitTimeout: 3,
      finishOnKey: '*',
      numDigits: 4,
      retries: 3,
      invalidDigitsSound: 'https://example.com/invalid.wav',
      validDigits: '123',
      playBeep: true,
      redirect: false,
      prompts: [{ kind: 'Speak' }, { kind: 'Wait', length: 2 }, { kind: 'Play' }],
    });
    expect(only('<GetDigits finishOnKey=""/>')).toMatchObject({ finishOnKey: null });
    expect(only('<GetDigits finishOnKey="none"/>')).toMatchObject({ finishOnKey: null });
  });

  it('GetInput: action and inputType required, other defaults applied', () => {
    expect(only('<GetInput action="https://example.com/in" inputType="dtmf speech"/>')).toEqual({
      kind: 'GetInput',
      action: 'https://example.com/in',
      method: 'POST',
      inputType: 'dtmf speech',
      executionTimeout: 15,
      digitEndTimeout: 'auto',
      finishOnKey: '#',
      numDigits: 32,
      prompts: [],
    });
    const xml = `<GetInput action="https://example.com/in" method="GET" inputType="speech"
      executionTimeout="30" digitEndTimeout="5" finishOnKey="none" numDigits="6"><Speak>Say it</Speak></GetInput>`;
    expect(only(xml)).toMatchObject({
      method: 'GET',
      inputType: 'speech',
      executionTimeout: 30,
      digitEndTimeout: 5,
      finishOnKey: null,
      numDigits: 6,
      prompts: [{ kind: 'Speak', text: 'Say it' }],
    });
  });

  it('Dial: defaults, with Number and User defaults', () => {
    const xml = '<Dial><Number>+14155550100</Number><User>sip:alice@example.com</User></Dial>';
    expect(only(xml)).toEqual({
      kind: 'Dial',
      action: null,
      method: 'POST',
      timeout: null,
      hangupOnStar: false,
      timeLimit: 14400,
      callerId: null,
      callerName: null,
      confirmSound: null,
      confirmKey: null,
      dialMusic: 'real',
      redirect: true,
      callbackUrl: null,
      callbackMethod: 'POST',
      digitsMatch: [],
      sipHeaders: {},
      targets: [
        {
          kind: 'Number',
          number: '+14155550100',
          sendDigits: null,
          sendOnPreanswer: false,
          callerId: null,
          callerName: null,
        },
        { kind: 'User', uri: 'sip:alice@example.com', sendDigits: null, sipHeaders: {} },
      ],
    });
  });

  it('Dial: every attribute set', () => {
    const xml = `<Dial action="https://example.com/dial" method="GET" timeout="20"
      hangupOnStar="true" timeLimit="600" callerId="+14155550199" callerName="Front desk"
      confirmSound="https://example.com/confirm" confirmKey="5"
      dialMusic="https://example.com/music" redirect="false"
      callbackUrl="https://example.com/cb" callbackMethod="GET" digitsMatch="123, *9"
      sipHeaders="Team=sales,Ref=a%20b">
      <Number sendDigits="wW1#" sendOnPreanswer="true" callerId="+1999" callerName="Bob">14155550100</Number>
      <User sendDigits="9" sipHeaders="X=1">sip:bob@sip.example.com:5080</User>
    </Dial>`;
    expect(only(xml)).toEqual({
      kind: 'Dial',
      action: 'https://example.com/dial',
      method: 'GET',
      timeout: 20,
      hangupOnStar: true,
      timeLimit: 600,
      callerId: '+14155550199',
      callerName: 'Front desk',
      confirmSound: 'https://example.com/confirm',
      confirmKey: '5',
      dialMusic: 'https://example.com/music',
      redirect: false,
      callbackUrl: 'https://example.com/cb',
      callbackMethod: 'GET',
      digitsMatch: ['123', '*9'],
      sipHeaders: { Team: 'sales', Ref: 'a%20b' },
      targets: [
        {
          kind: 'Number',
          number: '14155550100',
          sendDigits: 'wW1#',
          sendOnPreanswer: true,
          callerId: '+1999',
          callerName: 'Bob',
        },
        {
          kind: 'User',
          uri: 'sip:bob@sip.example.com:5080',
          sendDigits: '9',
          sipHeaders: { X: '1' },
        },
      ],
    });
  });

  it('Stream: the voice document defaults', () => {
    expect(only('<Stream>wss://ai.example.com/audio</Stream>')).toEqual({
      kind: 'Stream',
      url: 'wss://ai.example.com/audio',
      bidirectional: false,
      audioTrack: 'inbound',
      streamTimeout: 86400,
      statusCallbackUrl: null,
      statusCallbackMethod: 'POST',
      contentType: 'audio/x-l16;rate=8000',
      extraHeaders: {},
      keepCallAlive: false,
      noiseCancellation: false,
      noiseCancellationLevel: 85,
    });
  });

  it('Stream: every attribute set', () => {
    const xml = `<Stream bidirectional="false" audioTrack="both" streamTimeout="120"
      statusCallbackUrl="https://example.com/status" statusCallbackMethod="GET"
      contentType="audio/x-mulaw;rate=8000" extraHeaders="tenant=42,session=abc"
      keepCallAlive="true" noiseCancellation="true" noiseCancellationLevel="60">ws://127.0.0.1:9000/s</Stream>`;
    expect(only(xml)).toEqual({
      kind: 'Stream',
      url: 'ws://127.0.0.1:9000/s',
      bidirectional: false,
      audioTrack: 'both',
      streamTimeout: 120,
      statusCallbackUrl: 'https://example.com/status',
      statusCallbackMethod: 'GET',
      contentType: 'audio/x-mulaw;rate=8000',
      extraHeaders: { tenant: '42', session: 'abc' },
      keepCallAlive: true,
      noiseCancellation: true,
      noiseCancellationLevel: 60,
    });
  });

  it('Record: the public API defaults, finishOnKey none, and no attribute beyond its own', () => {
    expect(only('<Record/>')).toEqual({
      kind: 'Record',
      action: null,
      method: 'POST',
      fileFormat: 'mp3',
      redirect: true,
      timeout: 15,
      maxLength: 60,
      playBeep: true,
      finishOnKey: '1234567890*#',
      recordSession: false,
      startOnDialAnswer: false,
      callbackUrl: null,
      callbackMethod: 'POST',
    });
    expect(only('<Record finishOnKey="none" fileFormat="wav" maxLength="30"/>')).toMatchObject({
      finishOnKey: '',
      fileFormat: 'wav',
      maxLength: 30,
    });
    expect(() => only('<Record anything="goes"/>')).toThrow(/anything/);
    expect(() => only('<Record fileFormat="ogg"/>')).toThrow(/fileFormat/);
    expect(() => only('<Record finishOnKey="x"/>')).toThrow(/finishOnKey/);
  });

  it('Message, MultiPartyCall: kept by name with raw attributes', () => {
    expect(only('<Message src="+1415" dst="+1416">Hi &amp; bye</Message>')).toEqual({
      kind: 'Message',
      attributes: { src: '+1415', dst: '+1416' },
      text: 'Hi & bye',
    });
    expect(only('<MultiPartyCall role="Agent">mpc</MultiPartyCall>')).toMatchObject({
      kind: 'MultiPartyCall',
      attributes: { role: 'Agent' },
    });
  });

  it('keeps numbers and leading zeros as strings', () => {
    expect(only('<Dial callerId="0044123"><Number>+14155550100</Number></Dial>')).toMatchObject({
      callerId: '0044123',
      targets: [{ number: '+14155550100' }],
    });
    expect(only('<Message dst="00123">007</Message>')).toMatchObject({
      attributes: { dst: '00123' },
      text: '007',
    });
  });
});
