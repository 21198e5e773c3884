import { describe, expect, it } from 'vitest';
import { parseAnswerXml } from '../../../../src/call/xml/parse-answer-xml.js';
import type { SpeakInstruction } from '../../../../src/call/xml/answer-document.js';

function speak(content: string): SpeakInstruction {
  const [first] = parseAnswerXml(`<Response><Speak>${content}</Speak></Response>`).instructions;
  return first as SpeakInstruction;
}

describe('Speak content: SSML kept as written, plain text for synthesis', () => {
  it('keeps every accepted SSML element in ssml and strips it from text', () => {
    const content =
      '<p><s>Your code is <say-as interpret-as="digits">1234</say-as>.</s></p>' +
      '<break time="500ms"/><prosody rate="slow" pitch="+2st">Slowly</prosody> ' +
      '<emphasis level="strong">now</emphasis>, <sub alias="World Wide Web">WWW</sub> ' +
      '<phoneme alphabet="ipa" ph="təˈmɑːtəʊ">tomato</phoneme> ' +
      '<lang xml:lang="fr-FR">bonjour</lang> <w role="amazon:VB">read</w>';
    const result = speak(content);
    expect(result.ssml).toBe(content);
    expect(result.text).toBe('Your code is 1234. Slowly now, WWW tomato bonjour read');
  });

  it('decodes entities in text but keeps them in ssml', () => {
    const result = speak('Fish &amp; chips &lt;3 &#72;&#x49; &quot;ok&quot; &apos;s &nbsp;');
    expect(result.ssml).toBe('Fish &amp; chips &lt;3 &#72;&#x49; &quot;ok&quot; &apos;s &nbsp;');
    expect(result.text).toBe('Fish & chips <3 HI "ok" \'s &nbsp;');
  });

  it('separates words at break, p and s, joins across inline elements', () => {
    expect(speak('One<break/>two').text).toBe('One two');
    expect(speak('<s>One</s><s>two</s>').text).toBe('One two');
    expect(speak('un<emphasis>believ</emphasis>able').text).toBe('unbelievable');
  });

  it('takes CDATA literally and drops comments', () => {
    const result = speak('<![CDATA[a < b & c]]> and <!-- hidden --> more');
    expect(result.ssml).toBe('<![CDATA[a < b & c]]> and <!-- hidden --> more');
    expect(result.text).toBe('a < b & c and more');
  });

  it('collapses whitespace and newlines', () => {
    expect(speak('\n  Hello\n\n   world \t ').text).toBe('Hello world');
    expect(speak('\n  Hello\n\n   world \t ').ssml).toBe('Hello\n\n   world');
  });

  it('keeps SSML inside Speak nested in GetDigits and PreAnswer', () => {
    const { instructions } = parseAnswerXml(
      '<Response><PreAnswer><Speak>Please <break time="1s"/> hold</Speak></PreAnswer>' +
        '<GetDigits><Speak>Press <emphasis>one</emphasis></Speak></GetDigits></Response>',
    );
    expect(instructions).toMatchObject([
      {
        kind: 'PreAnswer',
        instructions: [{ ssml: 'Please <break time="1s"/> hold', text: 'Please hold' }],
      },
      {
        kind: 'GetDigits',
        prompts: [{ ssml: 'Press <emphasis>one</emphasis>', text: 'Press one' }],
      },
    ]);
  });

  it('accepts SSML-only content (a pause) with empty plain text', () => {
    expect(speak('<break time="2s"/>')).toMatchObject({ ssml: '<break time="2s"/>', text: '' });
  });

  it('refuses elements that are not accepted SSML, including answer XML elements', () => {
    const allowed = 'break, prosody, emphasis, say-as, phoneme, sub, p, s, lang, w';
    expect(() => speak('Hi <Play>https://e.com/a.wav</Play>')).toThrow(
      `Speak: <Play> is not allowed inside <Speak> (SSML elements allowed: ${allowed})`,
    );
    expect(() => speak('<audio src="https://e.com/a.wav"/>')).toThrow(
      `Speak: <audio> is not allowed inside <Speak> (SSML elements allowed: ${allowed})`,
    );
    expect(() => speak('<Break/>')).toThrow('Speak: <Break> is not allowed inside <Speak>');
  });

  it('refuses SSML that is not well-formed', () => {
    expect(() => speak('<prosody rate="slow">unclosed')).toThrow(/^Response: XML does not parse/);
    expect(() => speak('<break time="1s">')).toThrow(/^Response: XML does not parse/);
  });

  it('reads attribute values holding ">" inside SSML', () => {
    expect(speak('<say-as interpret-as="a>b">x</say-as>').text).toBe('x');
  });
});
