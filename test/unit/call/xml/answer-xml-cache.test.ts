import { describe, expect, it } from 'vitest';
import { AnswerXmlCache } from '../../../../src/call/xml/answer-xml-cache.js';
import { AnswerXmlError } from '../../../../src/call/xml/answer-xml-error.js';

describe('AnswerXmlCache', () => {
  it('parses a document once and gives the same result for the same text', () => {
    const cache = new AnswerXmlCache();
    const text = '<Response><Speak>Hello</Speak></Response>';
    const first = cache.parse(text);
    expect(first.instructions).toMatchObject([{ kind: 'Speak', text: 'Hello' }]);
    expect(cache.parse(text)).toBe(first);
    expect(cache.parse('<Response><Hangup/></Response>')).not.toBe(first);
  });

  it('throws the same specific error again for an invalid document', () => {
    const cache = new AnswerXmlCache();
    const bad = '<Response><Speak voice="ROBOT">Hi</Speak></Response>';
    expect(() => cache.parse(bad)).toThrow(AnswerXmlError);
    expect(() => cache.parse(bad)).toThrow(/voice must be MAN or WOMAN/);
  });
});
