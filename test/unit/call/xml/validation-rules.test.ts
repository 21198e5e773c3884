import { describe, expect, it } from 'vitest';
import { parseAnswerXml } from '../../../../src/call/xml/parse-answer-xml.js';
import { AnswerXmlError } from '../../../../src/call/xml/answer-xml-error.js';

function rejects(body: string, message: string): AnswerXmlError {
  const xml = body.startsWith('<Response') ? body : `<Response>${body}</Response>`;
  let caught: unknown;
  try {
    parseAnswerXml(xml);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AnswerXmlError);
  expect((caught as AnswerXmlError).message).toBe(message);
  return caught as AnswerXmlError;
}

describe('parseAnswerXml: document rules', () => {
  it('requires <Response> as the single root', () => {
    rejects('<Responses/>', 'Response: the root element must be <Response>, got <Responses>');
    expect(() => parseAnswerXml('<response/>')).toThrow(
      'Response: the root element must be <Response>, got <response>',
    );
    rejects(
      '<Response/><Response/>',
      'Response: the document must have exactly one root element, <Response>',
    );
    rejects('<Response/> trailing', 'Response: text after the root element is not allowed');
    rejects(
      '<Response/> trailing <!-- note -->',
      'Response: text after the root element is not allowed',
    );
    expect(parseAnswerXml('<Response/>\n<!-- note -->\n')).toEqual({ instructions: [] });
  });

  it('refuses XML that does not parse, with its position', () => {
    rejects(
      '<Response><Speak>hi</Play></Response>',
      "Response: XML does not parse (line 1, column 20): Expected closing tag 'Speak' (opened in line 1, col 11) instead of closing tag 'Play'.",
    );
    expect(() => parseAnswerXml('')).toThrow(AnswerXmlError);
    expect(() => parseAnswerXml('not xml')).toThrow(/^Response: XML does not parse/);
    expect(() => parseAnswerXml('<Response><Wait length=5/></Response>')).toThrow(
      /^Response: XML does not parse/,
    );
    expect(() => parseAnswerXml('<Response><Wait beep/></Response>')).toThrow(
      /^Response: XML does not parse/,
    );
    expect(() => parseAnswerXml('<Response><Wait length="1" length="2"/></Response>')).toThrow(
      /^Response: XML does not parse/,
    );
  });

  it('refuses a DOCTYPE (no entity declarations)', () => {
    rejects(
      '<!DOCTYPE Response [<!ENTITY a "aaaa">]><Response><Speak>&a;</Speak></Response>',
      'Response: a DOCTYPE declaration is not allowed',
    );
  });

  it('refuses a document nested too deep for the parser as XML that does not parse', () => {
    const deep = `<Response>${'<Wait>'.repeat(150)}${'</Wait>'.repeat(150)}</Response>`;
    expect(() => parseAnswerXml(deep)).toThrow(AnswerXmlError);
    expect(() => parseAnswerXml(deep)).toThrow(/XML does not parse/);
  });

  it('refuses documents over 100 KB and accepts one at the limit', () => {
    const wrapper = '<Response><Speak></Speak></Response>';
    const atLimit = `<Response><Speak>${'a'.repeat(102400 - wrapper.length)}</Speak></Response>`;
    expect(Buffer.byteLength(atLimit)).toBe(102400);
    expect(parseAnswerXml(atLimit).instructions).toHaveLength(1);
    rejects(
      `<Response><Speak>${'a'.repeat(102401 - wrapper.length)}</Speak></Response>`,
      'Response: document is 102401 bytes, over the limit of 102400 bytes',
    );
    // Bytes, not characters: 'é' is two bytes in UTF-8.
    const multiByte = `<Response><Speak>${'é'.repeat(51200)}</Speak></Response>`;
    expect(() => parseAnswerXml(multiByte)).toThrow(/over the limit of 102400 bytes/);
  });
});

describe('parseAnswerXml: element and child rules', () => {
  it('refuses elements outside the list, matching names case-sensitively', () => {
    rejects(
      '<Say>hi</Say>',
      'Response: <Say> is not allowed inside <Response> (allowed: Speak, Play, GetDigits, GetInput, Record, Dial, Message, Redirect, Wait, Hangup, PreAnswer, Conference, DTMF, MultiPartyCall, Stream)',
    );
    expect(() => parseAnswerXml('<Response><speak>hi</speak></Response>')).toThrow(
      /^Response: <speak> is not allowed inside <Response>/,
    );
  });

  it('refuses wrong children', () => {
    rejects(
      '<GetDigits><Dial><Number>1</Number></Dial></GetDigits>',
      'GetDigits: <Dial> is not allowed inside <GetDigits> (allowed: Speak, Play, Wait)',
    );
    rejects(
      '<GetInput action="https://e.com/" inputType="dtmf"><GetDigits/></GetInput>',
      'GetInput: <GetDigits> is not allowed inside <GetInput> (allowed: Speak, Play, Wait)',
    );
    expect(() => parseAnswerXml('<Response><Number>123</Number></Response>')).toThrow(
      /^Response: <Number> is not allowed inside <Response>/,
    );
    rejects(
      '<Dial><Speak>hi</Speak></Dial>',
      'Dial: <Speak> is not allowed inside <Dial> (allowed: Number, User)',
    );
    rejects(
      '<PreAnswer><Dial><Number>1</Number></Dial></PreAnswer>',
      'PreAnswer: <Dial> is not allowed inside <PreAnswer> (allowed: Play, Speak, GetDigits, Wait, Redirect, Message, DTMF)',
    );
    rejects(
      '<PreAnswer><PreAnswer/></PreAnswer>',
      'PreAnswer: <PreAnswer> is not allowed inside <PreAnswer> (allowed: Play, Speak, GetDigits, Wait, Redirect, Message, DTMF)',
    );
  });

  it('refuses children of elements that take only text', () => {
    rejects('<Play><Speak>x</Speak></Play>', 'Play: <Speak> is not allowed inside <Play>');
    rejects(
      '<Dial><Number><User>sip:a@b</User></Number></Dial>',
      'Number: <User> is not allowed inside <Number>',
    );
    rejects('<Record><Play>x</Play></Record>', 'Record: <Play> is not allowed inside <Record>');
  });

  it('refuses text where none belongs', () => {
    rejects('<Wait>5</Wait>', 'Wait: text is not allowed, got "5"');
    rejects('<Hangup>now</Hangup>', 'Hangup: text is not allowed, got "now"');
    rejects('<GetDigits>press 1</GetDigits>', 'GetDigits: text is not allowed, got "press 1"');
    rejects('<Dial>+14155550100</Dial>', 'Dial: text is not allowed, got "+14155550100"');
    rejects('<PreAnswer>hi</PreAnswer>', 'PreAnswer: text is not allowed, got "hi"');
    rejects('Hello<Speak>x</Speak>', 'Response: text is not allowed, got "Hello"');
  });

  it('requires the text that an element is about', () => {
    rejects('<Speak/>', 'Speak: text to speak is required');
    rejects('<Play> </Play>', 'Play: text (an http or https URL) is required');
    rejects('<Redirect/>', 'Redirect: text (an http or https URL) is required');
    rejects('<Stream/>', 'Stream: text (a ws or wss URL) is required');
    rejects('<Dial><Number/></Dial>', 'Number: text (the number to call) is required');
    rejects('<Dial><User/></Dial>', 'User: text (a sip: URI) is required');
    rejects('<DTMF/>', 'DTMF: digits are required (as text or the digits attribute)');
    rejects('<Dial/>', 'Dial: at least one <Number> or <User> is required');
  });
});

describe('parseAnswerXml: attribute rules', () => {
  it('refuses attributes outside each element list, case-sensitively', () => {
    const error = rejects(
      '<Speak rate="fast">x</Speak>',
      'Speak: attribute "rate" is not allowed (allowed: voice, language, loop)',
    );
    expect(error.element).toBe('Speak');
    expect(error.attribute).toBe('rate');
    rejects(
      '<Play Loop="2">https://e.com/a.wav</Play>',
      'Play: attribute "Loop" is not allowed (allowed: loop)',
    );
    rejects(
      '<Response version="1"/>',
      'Response: attribute "version" is not allowed (allowed: none)',
    );
    rejects('<PreAnswer x="1"/>', 'PreAnswer: attribute "x" is not allowed (allowed: none)');
    expect(() =>
      parseAnswerXml('<Response><Dial><Number gateways="x">1</Number></Dial></Response>'),
    ).toThrow('Number: attribute "gateways" is not allowed');
    expect(() =>
      parseAnswerXml('<Response><Stream audio_track="inbound">wss://e.com</Stream></Response>'),
    ).toThrow('Stream: attribute "audio_track" is not allowed');
  });

  it('Speak voice and language', () => {
    const error = rejects(
      '<Speak voice="ROBOT">x</Speak>',
      'Speak: voice must be MAN or WOMAN, got "ROBOT"',
    );
    expect(error.attribute).toBe('voice');
    rejects('<Speak voice="man">x</Speak>', 'Speak: voice must be MAN or WOMAN, got "man"');
    rejects('<Speak language="xx-XX">x</Speak>', 'Speak: language "xx-XX" is not supported');
    rejects('<Speak language="en-us">x</Speak>', 'Speak: language "en-us" is not supported');
    rejects(
      '<Speak voice="MAN" language="ko-KR">x</Speak>',
      'Speak: voice MAN is not available for language ko-KR (WOMAN only)',
    );
    rejects(
      '<GetDigits><Speak voice="MAN" language="arb">x</Speak></GetDigits>',
      'Speak: voice MAN is not available for language arb (WOMAN only)',
    );
  });

  it('integers: non-numeric, negative, fractional, out of range', () => {
    rejects('<Wait length="abc"/>', 'Wait: length must be an integer from 1 to 86400, got "abc"');
    rejects('<Wait length="0"/>', 'Wait: length must be an integer from 1 to 86400, got "0"');
    rejects('<Wait length="1.5"/>', 'Wait: length must be an integer from 1 to 86400, got "1.5"');
    rejects(
      '<GetDigits timeout="-3"/>',
      'GetDigits: timeout must be an integer from 1 to 600, got "-3"',
    );
    rejects(
      '<GetDigits digitTimeout=""/>',
      'GetDigits: digitTimeout must be an integer from 1 to 600, got ""',
    );
    rejects(
      '<Speak loop="-1">x</Speak>',
      'Speak: loop must be an integer from 0 to 10000, got "-1"',
    );
    rejects(
      '<Hangup schedule="soon"/>',
      'Hangup: schedule must be an integer from 0 to 86400, got "soon"',
    );
    rejects(
      '<Dial timeout="-1"><Number>1</Number></Dial>',
      'Dial: timeout must be an integer from 1 to 600, got "-1"',
    );
    rejects(
      '<GetInput action="https://e.com/" inputType="dtmf" digitEndTimeout="1"/>',
      'GetInput: digitEndTimeout must be an integer from 2 to 10, got "1"',
    );
    rejects(
      '<GetInput action="https://e.com/" inputType="dtmf" executionTimeout="61"/>',
      'GetInput: executionTimeout must be an integer from 5 to 60, got "61"',
    );
    rejects(
      '<Stream noiseCancellationLevel="120">wss://e.com</Stream>',
      'Stream: noiseCancellationLevel must be an integer from 60 to 100, got "120"',
    );
    rejects(
      '<Stream noiseCancellationLevel="59">wss://e.com</Stream>',
      'Stream: noiseCancellationLevel must be an integer from 60 to 100, got "59"',
    );
  });

  it('booleans are "true" or "false"', () => {
    rejects('<Wait beep="yes"/>', 'Wait: beep must be "true" or "false", got "yes"');
    rejects('<DTMF async="1">1</DTMF>', 'DTMF: async must be "true" or "false", got "1"');
    rejects(
      '<Stream noiseCancellation="TRUE">wss://e.com</Stream>',
      'Stream: noiseCancellation must be "true" or "false", got "TRUE"',
    );
  });

  it('methods are GET or POST', () => {
    rejects(
      '<Redirect method="PUT">https://e.com/</Redirect>',
      'Redirect: method must be GET or POST, got "PUT"',
    );
    rejects('<GetDigits method="post"/>', 'GetDigits: method must be GET or POST, got "post"');
    rejects(
      '<Dial callbackMethod="DELETE"><Number>1</Number></Dial>',
      'Dial: callbackMethod must be GET or POST, got "DELETE"',
    );
  });

  it('URLs must be http(s), and ws(s) for Stream', () => {
    rejects(
      '<GetDigits action="ftp://e.com/x"/>',
      'GetDigits: action must be an http or https URL, got "ftp://e.com/x"',
    );
    rejects(
      '<GetDigits action="/relative"/>',
      'GetDigits: action must be an http or https URL, got "/relative"',
    );
    rejects(
      '<Play>file:///etc/passwd</Play>',
      'Play: text must be an http or https URL, got "file:///etc/passwd"',
    );
    rejects(
      '<Redirect>next.xml</Redirect>',
      'Redirect: text must be an http or https URL, got "next.xml"',
    );
    rejects(
      '<Stream>https://e.com/s</Stream>',
      'Stream: text must be a ws or wss URL, got "https://e.com/s"',
    );
    rejects(
      '<Stream statusCallbackUrl="wss://e.com">wss://e.com</Stream>',
      'Stream: statusCallbackUrl must be an http or https URL, got "wss://e.com"',
    );
    rejects(
      '<Dial dialMusic="music.mp3"><Number>1</Number></Dial>',
      'Dial: dialMusic must be "real" or an http or https URL, got "music.mp3"',
    );
  });

  it('Hangup reason, GetInput inputType, Stream choices', () => {
    rejects('<Hangup reason="later"/>', 'Hangup: reason must be rejected or busy, got "later"');
    rejects('<GetInput action="https://e.com/"/>', 'GetInput: inputType is required');
    rejects('<GetInput inputType="dtmf"/>', 'GetInput: action is required');
    rejects(
      '<GetInput action="https://e.com/" inputType="voice"/>',
      'GetInput: inputType must be dtmf, speech or dtmf speech, got "voice"',
    );
    rejects(
      '<Stream audioTrack="left">wss://e.com</Stream>',
      'Stream: audioTrack must be inbound, outbound or both, got "left"',
    );
    rejects(
      '<Stream contentType="audio/x-l16;rate=44100">wss://e.com</Stream>',
      'Stream: contentType must be audio/x-l16;rate=8000, audio/x-l16;rate=16000, audio/x-l16;rate=24000 or audio/x-mulaw;rate=8000, got "audio/x-l16;rate=44100"',
    );
  });

  it('Stream: bidirectional only with the inbound track; extraHeaders at most 512 bytes', () => {
    rejects(
      '<Stream bidirectional="true" audioTrack="both">wss://e.com</Stream>',
      'Stream: audioTrack must be inbound when bidirectional is "true", got "both"',
    );
    rejects(
      '<Stream bidirectional="true" audioTrack="outbound">wss://e.com</Stream>',
      'Stream: audioTrack must be inbound when bidirectional is "true", got "outbound"',
    );
    const fits = `a=${'x'.repeat(510)}`;
    expect(
      parseAnswerXml(`<Response><Stream extraHeaders="${fits}">wss://e.com</Stream></Response>`),
    ).toBeTruthy();
    rejects(
      `<Stream extraHeaders="${fits}y">wss://e.com</Stream>`,
      'Stream: extraHeaders must be at most 512 bytes, got 513',
    );
    rejects(
      '<Stream extraHeaders="novalue">wss://e.com</Stream>',
      'Stream: extraHeaders must be a list of name=value pairs separated by commas, got "novalue"',
    );
  });

  it('digit strings: GetDigits keys, DTMF digits, Dial keys and headers', () => {
    rejects(
      '<GetDigits finishOnKey="##"/>',
      'GetDigits: finishOnKey must be one of 0-9, *, # or "none", got "##"',
    );
    rejects(
      '<GetDigits validDigits="12a"/>',
      'GetDigits: validDigits may hold only 0-9, * and #, got "12a"',
    );
    rejects('<DTMF>12x</DTMF>', 'DTMF: digits may hold only 0-9, *, #, A-D, w and W, got "12x"');
    rejects(
      '<DTMF digits="1">2</DTMF>',
      'DTMF: give the digits as text or as the digits attribute, not both',
    );
    rejects(
      '<Dial confirmKey="11"><Number>1</Number></Dial>',
      'Dial: confirmKey must be one of 0-9, * or #, got "11"',
    );
    rejects(
      '<Dial digitsMatch="12,ab"><Number>1</Number></Dial>',
      'Dial: digitsMatch must be digit sequences (0-9, *, #) separated by commas, got "12,ab"',
    );
    rejects(
      '<Dial><Number sendDigits="1 2">1</Number></Dial>',
      'Number: sendDigits may hold only 0-9, *, #, A-D, w and W, got "1 2"',
    );
    rejects(
      '<Dial sipHeaders="a=1,a=2"><Number>1</Number></Dial>',
      'Dial: sipHeaders names "a" twice',
    );
    rejects(
      '<Dial><User sipHeaders="bad name=1">sip:a@b.com</User></Dial>',
      'User: sipHeaders must be a list of name=value pairs separated by commas, got "bad name=1"',
    );
  });

  it('Dial targets and caller name', () => {
    rejects(
      '<Dial><Number>+1 415 555 0100</Number></Dial>',
      'Number: text must be a phone number (digits with an optional leading +), got "+1 415 555 0100"',
    );
    rejects(
      '<Dial><User>alice@example.com</User></Dial>',
      'User: text must be a sip: URI such as sip:alice@example.com, got "alice@example.com"',
    );
    rejects(
      `<Dial callerName="${'n'.repeat(51)}"><Number>1</Number></Dial>`,
      'Dial: callerName must be at most 50 characters, got 51',
    );
  });
});
