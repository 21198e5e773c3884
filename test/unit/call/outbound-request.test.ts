import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/core/errors.js';
import {
  RESERVED_SIP_HEADER_NAMES,
  RESERVED_SIP_HEADER_PREFIXES,
  outboundSipHeaders,
} from '../../../src/call/client-sip-headers.js';
import { parseOutboundCallRequest } from '../../../src/call/outbound-request.js';

const BASE = {
  from: '14155550100',
  to: '14155550111',
  answer_url: 'https://example.com/answer',
};
const SIP_BASE = { ...BASE, to: 'sip:alice@sip.example.com' };
const PASSWORD = 'Secr3tPassw0rd';

const parse = (extra: Record<string, unknown>, base: Record<string, unknown> = BASE) =>
  parseOutboundCallRequest({ ...base, ...extra });

/** The ApiError a body is refused with. */
function refusal(body: Record<string, unknown>): { status: number; message: string } {
  try {
    parseOutboundCallRequest(body);
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, message: error.message };
    throw error;
  }
  throw new Error('the body was accepted');
}
const invalid = (message: string) => ({ status: 400, message });

const URL_RULE = 'an http or https URL';
const METHOD_RULE = 'GET or POST';
const TO_RULE = 'E.164 phone numbers or sip:/sips: URIs separated by the delimiter, at most 1000';
const PASSWORD_RULE =
  'invalid sip_auth_password: must be 8 to 128 characters with at least one upper-case letter, one lower-case letter and one digit';

describe('parseOutboundCallRequest', () => {
  it('applies every default', () => {
    const request = parse({});
    expect(request).toMatchObject({
      from: '+14155550100',
      to: [{ kind: 'number', number: '+14155550111' }],
      answerUrl: 'https://example.com/answer',
      answerMethod: 'POST',
      ringUrl: null,
      ringMethod: 'POST',
      hangupMethod: 'POST',
      fallbackMethod: 'POST',
      machineDetectionMethod: 'POST',
      sendOnPreanswer: false,
      timeLimit: 14400,
      hangupOnRing: null,
      ringTimeout: null,
      machineDetection: null,
      machineDetectionTime: 5000,
      sipHeaders: [],
      sipAuth: null,
      parentCallUuid: null,
      errorIfParentNotFound: false,
      callType: 'voice',
      delimiter: '<',
    });
  });

  it('keeps every parameter given, from form strings', () => {
    const request = parse({
      answer_method: 'GET',
      ring_url: 'http://example.com/ring',
      ring_method: 'GET',
      hangup_url: 'https://example.com/hangup',
      fallback_url: 'https://example.com/fallback',
      caller_name: 'Front desk',
      send_digits: '123wW#*ABCD',
      send_on_preanswer: 'true',
      time_limit: '60',
      hangup_on_ring: '30',
      ring_timeout: '45',
      machine_detection: 'hangup',
      machine_detection_time: '2000',
      machine_detection_url: 'https://example.com/amd',
      machine_detection_method: 'GET',
      machine_detection_maximum_speech_length: '6000',
      machine_detection_initial_silence: '10000',
      machine_detection_maximum_words: '2',
      machine_detection_initial_greeting: '1000',
      machine_detection_silence: '500',
      machine_detection_answer_time: '45000',
      parent_call_uuid: 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE',
      parent_auth_id: 'MA0123456789ABCDEFGH',
      error_if_parent_not_found: 'true',
      call_type: 'chatapp_voice',
    });
    expect(request).toMatchObject({
      answerMethod: 'GET',
      ringUrl: 'http://example.com/ring',
      ringMethod: 'GET',
      hangupUrl: 'https://example.com/hangup',
      fallbackUrl: 'https://example.com/fallback',
      callerName: 'Front desk',
      sendDigits: '123wW#*ABCD',
      sendOnPreanswer: true,
      timeLimit: 60,
      hangupOnRing: 30,
      ringTimeout: 45,
      machineDetection: 'hangup',
      machineDetectionTime: 2000,
      machineDetectionUrl: 'https://example.com/amd',
      machineDetectionMethod: 'GET',
      machineDetectionMaximumSpeechLength: 6000,
      machineDetectionInitialSilence: 10000,
      machineDetectionMaximumWords: 2,
      machineDetectionInitialGreeting: 1000,
      machineDetectionSilence: 500,
      machineDetectionAnswerTime: 45000,
      parentCallUuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
      parentAuthId: 'MA0123456789ABCDEFGH',
      errorIfParentNotFound: true,
      callType: 'chatapp_voice',
    });
  });

  it('takes JSON numbers and booleans as they come', () => {
    const request = parse({ from: 14155550100, time_limit: 300, send_on_preanswer: false });
    expect(request).toMatchObject({ from: '+14155550100', timeLimit: 300, sendOnPreanswer: false });
  });

  describe('required parameters (422)', () => {
    it.each(['from', 'to', 'answer_url'])('%s', (name) => {
      const body: Record<string, unknown> = { ...BASE };
      delete body[name];
      expect(refusal(body)).toEqual({
        status: 422,
        message: `missing required parameter: ${name}`,
      });
    });

    it('reports the first missing one for an empty body', () => {
      expect(refusal({})).toEqual({ status: 422, message: 'missing required parameter: from' });
    });
  });

  describe('from', () => {
    it('accepts E.164 with or without +, trimmed (an unencoded + in a form is a space)', () => {
      expect(parse({ from: '+442071838750' }).from).toBe('+442071838750');
      expect(parse({ from: ' 14155550100' }).from).toBe('+14155550100');
    });

    it.each([
      ['a SIP URI', 'sip:alice@example.com'],
      ['letters', 'ACME'],
      ['too short for its country', '1415555'],
      ['an unknown country code', '999123456789'],
      ['formatting characters', '+1 (415) 555-0100'],
      ['empty', ''],
    ])('refuses %s', (_what, from) => {
      expect(refusal({ ...BASE, from })).toEqual(
        invalid('invalid from: must be a phone number in E.164 format'),
      );
    });
  });

  describe('to', () => {
    it('splits on <, trims, and tells numbers from SIP URIs', () => {
      expect(
        parse({ to: ' +14155550111 < sip:bob@example.com;transport=tcp<sips:carol@x.org ' }).to,
      ).toEqual([
        { kind: 'number', number: '+14155550111' },
        { kind: 'sip', uri: 'sip:bob@example.com;transport=tcp' },
        { kind: 'sip', uri: 'sips:carol@x.org' },
      ]);
    });

    it('accepts 1000 destinations and refuses 1001', () => {
      const numbers = (n: number) =>
        Array.from({ length: n }, (_, i) => `1415555${String(i).padStart(4, '0')}`).join('<');
      expect(parse({ to: numbers(1000) }).to).toHaveLength(1000);
      expect(refusal({ ...BASE, to: numbers(1001) })).toEqual(
        invalid('invalid to: must be at most 1000 destinations, not 1001'),
      );
    });

    it('refuses an empty destination, naming its position', () => {
      expect(refusal({ ...BASE, to: '14155550111<<14155550112' })).toEqual(
        invalid(`invalid to: must be ${TO_RULE}; destination 2 is empty`),
      );
      expect(refusal({ ...BASE, to: '14155550111<' })).toEqual(
        invalid(`invalid to: must be ${TO_RULE}; destination 2 is empty`),
      );
    });

    it.each([
      ['a word', 'alice'],
      ['another URI scheme', 'tel:+14155550111'],
      ['a malformed SIP URI', 'sip:'],
      ['a SIP URI with a password', 'sip:alice:Secret1@example.com'],
      ['a SIP URI with header fields', 'sip:alice@example.com?Subject=hi'],
    ])('refuses %s without quoting it', (_what, destination) => {
      const { message } = refusal({ ...BASE, to: `14155550111<${destination}` });
      expect(message).toBe(`invalid to: must be ${TO_RULE}; destination 2 is neither`);
    });

    it('splits on a custom delimiter', () => {
      const request = parse({ to: '14155550111,sip:bob@example.com', delimiter: ',' });
      expect(request.delimiter).toBe(',');
      expect(request.to.map((d) => d.kind)).toEqual(['number', 'sip']);
      expect(parse({ to: '14155550111;;14155550112', delimiter: ';;' }).to).toHaveLength(2);
    });

    it('does not split on < when another delimiter is given', () => {
      expect(refusal({ ...BASE, to: '14155550111<14155550112', delimiter: ',' })).toEqual(
        invalid(`invalid to: must be ${TO_RULE}; destination 1 is neither`),
      );
    });
  });

  describe('delimiter', () => {
    it.each(['', 'x', '5', '+', '<<<<<<', 'é'])('refuses %j', (delimiter) => {
      expect(refusal({ ...BASE, delimiter })).toEqual(
        invalid(
          'invalid delimiter: must be 1 to 5 characters, none of them a letter, a digit or +',
        ),
      );
    });
  });

  describe('URLs and methods', () => {
    const urls = ['answer_url', 'ring_url', 'hangup_url', 'fallback_url', 'machine_detection_url'];
    it.each(
      urls.flatMap((name) =>
        ['ftp://example.com/x', 'example.com/x', 'https://', ''].map((v) => [name, v]),
      ),
    )('%s refuses %j', (name, value) => {
      expect(refusal({ ...BASE, [name]: value })).toEqual(
        invalid(`invalid ${name}: must be ${URL_RULE}`),
      );
    });

    it('refuses a URL longer than 2048 characters', () => {
      const answer_url = `https://example.com/${'a'.repeat(2048)}`;
      expect(refusal({ ...BASE, answer_url })).toEqual(
        invalid(`invalid answer_url: must be ${URL_RULE}`),
      );
    });

    const methods = [
      'answer_method',
      'ring_method',
      'hangup_method',
      'fallback_method',
      'machine_detection_method',
    ];
    it.each(methods.flatMap((name) => ['PUT', 'post', ''].map((v) => [name, v])))(
      '%s refuses %j',
      (name, value) => {
        expect(refusal({ ...BASE, [name]: value })).toEqual(
          invalid(`invalid ${name}: must be ${METHOD_RULE}`),
        );
      },
    );
  });

  describe('caller_name', () => {
    it('accepts 50 characters, counting code points', () => {
      expect(parse({ caller_name: 'é'.repeat(50) }).callerName).toBe('é'.repeat(50));
    });

    it.each([
      ['51 characters', 'a'.repeat(51)],
      ['a line break', 'Front\r\nVia: x'],
    ])('refuses %s', (_what, caller_name) => {
      expect(refusal({ ...BASE, caller_name })).toEqual(
        invalid('invalid caller_name: must be at most 50 characters, without control characters'),
      );
    });
  });

  describe('send_digits', () => {
    it.each(['12E', '1 2', 'a', '', '1'.repeat(129)])('refuses %j', (send_digits) => {
      expect(refusal({ ...BASE, send_digits })).toEqual(
        invalid(
          'invalid send_digits: must be 1 to 128 of the characters 0-9 * # A B C D, w (wait 0.5 s) and W (wait 1 s)',
        ),
      );
    });
  });

  describe('integer ranges', () => {
    const ranges: [string, number, number, string][] = [
      ['time_limit', 1, 86400, ' (seconds)'],
      ['hangup_on_ring', 1, 7200, ' (seconds)'],
      ['ring_timeout', 1, 7200, ' (seconds)'],
      ['machine_detection_time', 2000, 10000, ' (milliseconds)'],
      ['machine_detection_maximum_speech_length', 1000, 6000, ' (milliseconds)'],
      ['machine_detection_initial_silence', 2000, 10000, ' (milliseconds)'],
      ['machine_detection_maximum_words', 2, 10, ''],
      ['machine_detection_initial_greeting', 1000, 5000, ' (milliseconds)'],
      ['machine_detection_silence', 500, 5000, ' (milliseconds)'],
      ['machine_detection_answer_time', 100, 45000, ' (milliseconds)'],
    ];
    it.each(ranges)('%s is an integer from %d to %d', (name, min, max, unit) => {
      const camel = name.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase());
      expect(parse({ [name]: min })[camel as 'timeLimit']).toBe(min);
      expect(parse({ [name]: String(max) })[camel as 'timeLimit']).toBe(max);
      const rule = invalid(`invalid ${name}: must be an integer from ${min} to ${max}${unit}`);
      for (const bad of [min - 1, max + 1, '1.5', 2.5, 'ten', '', true]) {
        expect(refusal({ ...BASE, [name]: bad })).toEqual(rule);
      }
    });
  });

  describe('enumerations and booleans', () => {
    it.each([
      ['machine_detection', 'false', 'true or hangup'],
      ['call_type', 'video', 'voice or chatapp_voice'],
      ['send_on_preanswer', 'yes', 'true or false'],
      ['error_if_parent_not_found', '1', 'true or false'],
      ['error_if_parent_not_found', 'TRUE', 'true or false'],
    ])('%s refuses %j', (name, value, rule) => {
      expect(refusal({ ...BASE, [name]: value })).toEqual(
        invalid(`invalid ${name}: must be ${rule}`),
      );
    });

    it('machine_detection takes true as a string or a JSON boolean', () => {
      expect(parse({ machine_detection: 'true' }).machineDetection).toBe('true');
      expect(parse({ machine_detection: true }).machineDetection).toBe('true');
    });
  });

  describe('parent call', () => {
    it('parent_call_uuid must be a UUID', () => {
      expect(refusal({ ...BASE, parent_call_uuid: 'not-a-uuid' })).toEqual(
        invalid('invalid parent_call_uuid: must be a UUID'),
      );
    });

    it('parent_auth_id must be letters or digits', () => {
      expect(refusal({ ...BASE, parent_auth_id: 'MA-1' })).toEqual(
        invalid('invalid parent_auth_id: must be 1 to 64 letters or digits'),
      );
    });
  });

  describe('sip_headers', () => {
    it('reads key=value pairs, trimming spaces around them', () => {
      expect(parse({ sip_headers: 'Customer=42, Tier=gold%20plus,a.b_c~=x-y' }).sipHeaders).toEqual(
        [
          { key: 'Customer', value: '42' },
          { key: 'Tier', value: 'gold%20plus' },
          { key: 'a.b_c~', value: 'x-y' },
        ],
      );
    });

    it.each(['novalue', 'a=', '=b', 'a=1,,b=2', 'a b=1', 'a=1=2', 'a=x y', 'a=<x>', 'é=1', ''])(
      'refuses %j',
      (sip_headers) => {
        expect(refusal({ ...BASE, sip_headers })).toEqual(
          invalid(
            "invalid sip_headers: must be key=value pairs separated by commas, at most 2048 characters, keys and values made of letters, digits and - . ! % * _ + ` ' ~",
          ),
        );
      },
    );

    it('refuses more than 2048 characters', () => {
      const sip_headers = Array.from({ length: 300 }, (_, i) => `k${i}=vvvv`).join(',');
      expect(refusal({ ...BASE, sip_headers }).status).toBe(400);
    });

    it.each(['PH-Custom', 'FS-Variable', 'SipAuthUser', 'ZT-Route'])(
      'drops the reserved prefix of %s silently',
      (key) => {
        const request = parse({ sip_headers: `Keep=1,${key}=x` });
        expect(request.sipHeaders).toEqual([{ key: 'Keep', value: '1' }]);
      },
    );

    it('drops reserved prefixes whatever their case', () => {
      expect(parse({ sip_headers: 'ph-a=1,fs-b=2,SIPAUTH=3,zt-c=4' }).sipHeaders).toEqual([]);
    });

    it('drops the reserved name ClientRegion, but not names that only start with it', () => {
      expect(
        parse({ sip_headers: 'ClientRegion=eu,clientregion=us,ClientRegionX=1' }).sipHeaders,
      ).toEqual([{ key: 'ClientRegionX', value: '1' }]);
    });

    it('keeps the reserved lists in constants', () => {
      expect(RESERVED_SIP_HEADER_PREFIXES).toEqual(['PH-', 'FS-', 'SipAuth', 'ZT-']);
      expect(RESERVED_SIP_HEADER_NAMES).toEqual(['ClientRegion']);
    });
  });

  describe('sip_auth_username and sip_auth_password', () => {
    const auth = { sip_auth_username: 'trunkuser', sip_auth_password: PASSWORD };

    it('are kept for SIP destinations', () => {
      const request = parse({ ...auth, to: 'sip:a@example.com<sips:b@example.com' }, SIP_BASE);
      expect(request.sipAuth?.username).toBe('trunkuser');
      expect(request.sipAuth?.password).toBe(PASSWORD);
    });

    it('are refused when any destination is a phone number', () => {
      expect(refusal({ ...SIP_BASE, ...auth, to: 'sip:a@example.com<14155550111' })).toEqual(
        invalid(
          'invalid sip_auth_username: must be used only when every destination in to is a SIP URI',
        ),
      );
      expect(refusal({ ...BASE, ...auth }).status).toBe(400);
    });

    it('must come together', () => {
      expect(refusal({ ...SIP_BASE, sip_auth_username: 'trunkuser' })).toEqual({
        status: 422,
        message: 'missing required parameter: sip_auth_password',
      });
      expect(refusal({ ...SIP_BASE, sip_auth_password: PASSWORD })).toEqual({
        status: 422,
        message: 'missing required parameter: sip_auth_username',
      });
    });

    it.each(['', 'has space', 'quote"d', 'x'.repeat(129)])('username %j is refused', (name) => {
      expect(refusal({ ...SIP_BASE, ...auth, sip_auth_username: name })).toEqual(
        invalid(
          'invalid sip_auth_username: must be 1 to 128 printable characters other than space, " and \\',
        ),
      );
    });

    it.each([
      ['7 characters', 'Abcdef1'],
      ['129 characters', `Ab1${'x'.repeat(126)}`],
      ['no upper case', 'abcdefg1'],
      ['no lower case', 'ABCDEFG1'],
      ['no digit', 'Abcdefgh'],
    ])('password with %s is refused, without being quoted', (_what, password) => {
      const { status, message } = refusal({ ...SIP_BASE, ...auth, sip_auth_password: password });
      expect(status).toBe(400);
      expect(message).toBe(PASSWORD_RULE);
      expect(message).not.toContain(password);
    });

    it('accepts passwords of 8 and 128 characters', () => {
      for (const password of ['Abcdef12', `Ab1${'x'.repeat(125)}`]) {
        expect(parse({ ...auth, sip_auth_password: password }, SIP_BASE).sipAuth?.password).toBe(
          password,
        );
      }
    });

    it('never shows the credentials in JSON or util.inspect', () => {
      const request = parse(auth, SIP_BASE);
      for (const text of [JSON.stringify(request), inspect(request, { depth: 10 })]) {
        expect(text).not.toContain(PASSWORD);
        expect(text).not.toContain('trunkuser');
      }
    });

    it('never quotes the password in any error, whatever else is wrong', () => {
      for (const extra of [{ to: '14155550111' }, { from: 'bad' }, { time_limit: 0 }]) {
        const { message } = refusal({ ...SIP_BASE, ...auth, ...extra });
        expect(message).not.toContain(PASSWORD);
      }
    });
  });
});

describe('outboundSipHeaders', () => {
  const pairs = [
    { key: 'Customer', value: '42' },
    { key: 'Tier', value: 'gold' },
  ];

  it('prefixes X-PH- on the outbound INVITE', () => {
    expect(outboundSipHeaders(pairs, { prefixed: true })).toEqual([
      { name: 'X-PH-Customer', value: '42' },
      { name: 'X-PH-Tier', value: 'gold' },
    ]);
  });

  it('forwards them bare when the originating leg used SIP authentication', () => {
    expect(outboundSipHeaders(pairs, { prefixed: false })).toEqual([
      { name: 'Customer', value: '42' },
      { name: 'Tier', value: 'gold' },
    ]);
  });

  it('drops reserved names from pairs of any source', () => {
    const mixed = [
      ...pairs,
      { key: 'PH-Internal', value: '1' },
      { key: 'ClientRegion', value: 'eu' },
    ];
    expect(outboundSipHeaders(mixed, { prefixed: false }).map((h) => h.name)).toEqual([
      'Customer',
      'Tier',
    ]);
  });
});
