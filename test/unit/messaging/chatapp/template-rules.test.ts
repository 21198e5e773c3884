import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../../src/core/errors.js';
import {
  parseTemplateDraft,
  placeholdersOf,
} from '../../../../src/messaging/chatapp/template-rules.js';

/*
 * How problems name their place, as these tests expect it: `components[i] (TYPE)` with i from 0;
 * a card's component as `components[i] (CAROUSEL) card j components[k] (TYPE)` with cards
 * numbered from 1 and k from 0; a button as `components[i] (BUTTONS) buttons[b] (TYPE)`, b from 0.
 */

const BODY = { type: 'BODY', text: 'Your order is ready for collection.' };

const template = (components: unknown[], extra: Record<string, unknown> = {}) => ({
  name: 'order_ready',
  language: 'en_US',
  category: 'UTILITY',
  components,
  ...extra,
});

/** The ApiError a body is refused with. */
function refusal(body: unknown): { status: number; message: string } {
  try {
    parseTemplateDraft(body);
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, message: error.message };
    throw error;
  }
  throw new Error('the template was accepted');
}
const invalid = (message: string) => ({ status: 400, message });
const missing = (name: string) => ({ status: 422, message: `missing required parameter: ${name}` });

const card = (format: string, extra: unknown[] = []) => ({
  components: [
    { type: 'HEADER', format, example: { header_handle: ['4::aW1hZ2U='] } },
    { type: 'BODY', text: 'Rich roast, 250 g.' },
    ...extra,
  ],
});
const QUICK_REPLY = { type: 'QUICK_REPLY', text: 'Tell me more' };
const carousel = (cards: unknown[]) => template([BODY, { type: 'CAROUSEL', cards }]);

describe('parseTemplateDraft accepts', () => {
  it('a text-only body', () => {
    const body = template([BODY]);
    expect(parseTemplateDraft(body)).toEqual(body);
  });

  it('a text header, positional body examples, a footer and buttons', () => {
    const body = template(
      [
        { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['A-17'] } },
        {
          type: 'BODY',
          text: 'Hello {{1}}, your order {{2}} ships on {{1}}’s birthday.',
          example: { body_text: [['Ana', 'A-17']] },
        },
        { type: 'FOOTER', text: 'Reply STOP to opt out' },
        {
          type: 'BUTTONS',
          buttons: [
            QUICK_REPLY,
            { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+14155550100' },
            {
              type: 'URL',
              text: 'Track',
              url: 'https://example.com/track/{{1}}',
              example: ['https://example.com/track/A-17'],
            },
            { type: 'URL', text: 'Shop', url: 'http://example.com/shop' },
            { type: 'COPY_CODE', text: 'Copy code' },
          ],
        },
      ],
      { category: 'MARKETING', allow_category_change: true },
    );
    expect(parseTemplateDraft(body)).toEqual(body);
  });

  it('named placeholders with their examples', () => {
    const body = template([
      {
        type: 'HEADER',
        format: 'TEXT',
        text: 'Hi {{first_name}}',
        example: { header_text_named_params: [{ param_name: 'first_name', example: 'Ana' }] },
      },
      {
        type: 'BODY',
        text: 'Order {{order_id}} is ready, {{first_name}}.',
        example: {
          body_text_named_params: [
            { param_name: 'first_name', example: 'Ana' },
            { param_name: 'order_id', example: 'A-17' },
          ],
        },
      },
    ]);
    expect(parseTemplateDraft(body)).toEqual(body);
  });

  it.each(['IMAGE', 'VIDEO', 'DOCUMENT'])('a %s header with a media handle', (format) => {
    const body = template([
      { type: 'HEADER', format, example: { header_handle: ['4::aW1hZ2U='] } },
      BODY,
    ]);
    expect(parseTemplateDraft(body)).toEqual(body);
  });

  it('a LOCATION header with nothing else', () => {
    const body = template([{ type: 'HEADER', format: 'LOCATION' }, BODY]);
    expect(parseTemplateDraft(body)).toEqual(body);
  });

  it('a carousel of 2 cards', () => {
    const buttons = { type: 'BUTTONS', buttons: [QUICK_REPLY] };
    const body = carousel([card('IMAGE', [buttons]), card('VIDEO', [buttons])]);
    expect(parseTemplateDraft(body)).toEqual(body);
  });

  it('an OTP button in an AUTHENTICATION template', () => {
    const body = template(
      [
        { type: 'BODY', text: 'Your code is {{1}}.', example: { body_text: [['123456']] } },
        { type: 'BUTTONS', buttons: [{ type: 'OTP', text: 'Copy code' }] },
      ],
      { category: 'AUTHENTICATION' },
    );
    expect(parseTemplateDraft(body)).toEqual(body);
  });

  it('and keeps only the fields it knows, treating null as left out', () => {
    const body = {
      ...template([{ ...BODY, buttons: [QUICK_REPLY], colour: 'red' }]),
      allow_category_change: null,
      parameter_format: 'POSITIONAL',
    };
    expect(parseTemplateDraft(body)).toEqual(template([BODY]));
  });
});

describe('parseTemplateDraft refuses', () => {
  const header = (extra: Record<string, unknown>) => template([{ type: 'HEADER', ...extra }, BODY]);
  const body = (extra: Record<string, unknown>) => template([{ type: 'BODY', ...extra }]);
  const buttons = (list: unknown, category = 'UTILITY') =>
    template([BODY, { type: 'BUTTONS', buttons: list }], { category });
  const long = (n: number) => 'Hi ' + 'x'.repeat(n - 3);

  it.each([
    ['a body that is not an object', [], invalid('the template must be a JSON object')],
    ['a missing name', { ...template([BODY]), name: undefined }, missing('name')],
    ['a missing language', { ...template([BODY]), language: null }, missing('language')],
    ['a missing category', { ...template([BODY]), category: undefined }, missing('category')],
    ['a missing components', { ...template([BODY]), components: undefined }, missing('components')],
    [
      'a name that is not a string',
      template([BODY], { name: 7 }),
      invalid('name must be a string'),
    ],
  ])('%s', (_, given, expected) => {
    expect(refusal(given)).toEqual(expected);
  });

  it.each(['Order_Ready', 'order-ready', '', 'x'.repeat(513)])('the name %j', (name) => {
    expect(refusal(template([BODY], { name }))).toEqual(
      invalid('name must be 1 to 512 lower-case letters, digits or underscores'),
    );
  });

  it.each(['EN', 'en-US', 'en_us', 'english', 'es_4190'])('the language %j', (language) => {
    expect(refusal(template([BODY], { language }))).toEqual(
      invalid(
        'language must be a code such as en or en_US: two or three lower-case letters, optionally _ and two upper-case letters or three digits',
      ),
    );
  });

  it.each([
    [
      'an unknown category',
      template([BODY], { category: 'marketing' }),
      invalid('category must be one of MARKETING, UTILITY or AUTHENTICATION'),
    ],
    [
      'a non-boolean allow_category_change',
      template([BODY], { allow_category_change: 'true' }),
      invalid('allow_category_change must be true or false'),
    ],
    ['empty components', template([]), invalid('components must be a non-empty list')],
    [
      'components that are not a list',
      template({} as unknown[]),
      invalid('components must be a non-empty list'),
    ],
    [
      'a component that is not an object',
      template([BODY, 'FOOTER']),
      invalid('components[1] must be an object'),
    ],
    [
      'an unknown component type',
      template([BODY, { type: 'SIDEBAR' }]),
      invalid('components[1]: type must be one of HEADER, BODY, FOOTER, BUTTONS or CAROUSEL'),
    ],
    [
      'no BODY',
      template([{ type: 'FOOTER', text: 'Thanks' }]),
      invalid('components must include a BODY'),
    ],
    [
      'a second BODY',
      template([BODY, BODY]),
      invalid('components[1] (BODY): only one BODY is allowed'),
    ],
    [
      'a second HEADER',
      template([
        { type: 'HEADER', format: 'LOCATION' },
        BODY,
        { type: 'HEADER', format: 'LOCATION' },
      ]),
      invalid('components[2] (HEADER): only one HEADER is allowed'),
    ],
    [
      'a second FOOTER',
      template([BODY, { type: 'FOOTER', text: 'a' }, { type: 'FOOTER', text: 'b' }]),
      invalid('components[2] (FOOTER): only one FOOTER is allowed'),
    ],
    [
      'a second BUTTONS',
      template([
        BODY,
        { type: 'BUTTONS', buttons: [QUICK_REPLY] },
        { type: 'BUTTONS', buttons: [QUICK_REPLY] },
      ]),
      invalid('components[2] (BUTTONS): only one BUTTONS is allowed'),
    ],
    [
      'a second CAROUSEL',
      template([
        BODY,
        { type: 'CAROUSEL', cards: [card('IMAGE'), card('IMAGE')] },
        { type: 'CAROUSEL', cards: [] },
      ]),
      invalid('components[2] (CAROUSEL): only one CAROUSEL is allowed'),
    ],
  ])('%s', (_, given, expected) => {
    expect(refusal(given)).toEqual(expected);
  });

  it.each([
    ['without text', body({}), 'text is required'],
    ['with blank text', body({ text: '  ' }), 'text is required'],
    ['with text that is not a string', body({ text: 5 }), 'text must be a string'],
    ['over 1,024 characters', body({ text: long(1025) }), 'text is at most 1,024 characters'],
    [
      'starting with a placeholder',
      body({ text: ' {{1}} is ready', example: { body_text: [['A']] } }),
      'text may not start or end with a placeholder',
    ],
    [
      'ending with a named placeholder',
      body({ text: 'Hello {{name}}.\n{{name}} ' }),
      'text may not start or end with a placeholder',
    ],
    [
      'mixing positional and named placeholders',
      body({ text: 'Hi {{1}} and {{name}}.' }),
      'text may not mix positional and named placeholders',
    ],
    [
      'numbering from 2',
      body({ text: 'Hi {{2}}.' }),
      'placeholders must be numbered from {{1}} in order of first appearance without gaps: {{2}} comes where {{1}} belongs',
    ],
    [
      'with a gap in the numbers',
      body({ text: 'Hi {{1}}, {{3}}.' }),
      'placeholders must be numbered from {{1}} in order of first appearance without gaps: {{3}} comes where {{2}} belongs',
    ],
    [
      'numbering out of order',
      body({ text: 'Hi {{2}}, {{1}}.' }),
      'placeholders must be numbered from {{1}} in order of first appearance without gaps: {{2}} comes where {{1}} belongs',
    ],
    [
      'without example sets',
      body({ text: 'Hi {{1}}, {{2}}.' }),
      'example.body_text is required: at least one example set of 2 values, one per placeholder',
    ],
    [
      'with an empty list of example sets',
      body({ text: 'Hi {{1}}.', example: { body_text: [] } }),
      'example.body_text is required: at least one example set of 1 value, one per placeholder',
    ],
    [
      'with an example set of the wrong size',
      body({ text: 'Hi {{1}}, {{2}}.', example: { body_text: [['Ana', 'A-17'], ['Bo']] } }),
      'example.body_text[1] holds 1 value but the text has 2 placeholders',
    ],
    [
      'with example sets that are not lists of strings',
      body({ text: 'Hi {{1}}.', example: { body_text: ['Ana'] } }),
      'example.body_text must be a list of example sets, each a list of strings',
    ],
    [
      'with an example that is not an object',
      body({ text: 'Hi {{1}}.', example: ['Ana'] }),
      'example must be an object',
    ],
    [
      'without named examples',
      body({ text: 'Hi {{name}}.' }),
      'example.body_text_named_params is required: one entry per named placeholder',
    ],
    [
      'with a named example for a missing name',
      body({
        text: 'Hi {{name}}, {{city}}.',
        example: { body_text_named_params: [{ param_name: 'name', example: 'Ana' }] },
      }),
      'example.body_text_named_params needs an entry for {{city}}',
    ],
    [
      'with a named example that is not in the text',
      body({
        text: 'Hi {{name}}.',
        example: {
          body_text_named_params: [
            { param_name: 'name', example: 'Ana' },
            { param_name: 'city', example: 'Lyon' },
          ],
        },
      }),
      'example.body_text_named_params has city, which is not a placeholder of the text',
    ],
    [
      'with a named example twice',
      body({
        text: 'Hi {{name}}.',
        example: {
          body_text_named_params: [
            { param_name: 'name', example: 'Ana' },
            { param_name: 'name', example: 'Bo' },
          ],
        },
      }),
      'example.body_text_named_params has name more than once',
    ],
    [
      'with a malformed named example',
      body({ text: 'Hi {{name}}.', example: { body_text_named_params: [{ param_name: 'name' }] } }),
      'example.body_text_named_params must be a list of objects with a param_name and an example, both strings',
    ],
  ])('a BODY %s', (_, given, rule) => {
    expect(refusal(given)).toEqual(invalid(`components[0] (BODY): ${rule}`));
  });

  it('counts characters, not UTF-16 units, against the body limit', () => {
    expect(() => parseTemplateDraft(body({ text: 'Hi ' + '🎉'.repeat(1021) }))).not.toThrow();
  });

  it.each([
    ['without a format', header({ text: 'Hi' }), 'format is required'],
    [
      'with an unknown format',
      header({ format: 'AUDIO' }),
      'format must be one of TEXT, IMAGE, VIDEO, DOCUMENT or LOCATION',
    ],
    ['TEXT without text', header({ format: 'TEXT' }), 'text is required'],
    [
      'TEXT over 60 characters',
      header({ format: 'TEXT', text: long(61) }),
      'text is at most 60 characters',
    ],
    [
      'TEXT with two placeholders',
      header({ format: 'TEXT', text: '{{1}} {{2}}', example: { header_text: ['a', 'b'] } }),
      'text may hold at most one placeholder',
    ],
    [
      'TEXT with {{2}}',
      header({ format: 'TEXT', text: 'Order {{2}}' }),
      'the placeholder must be {{1}}, not {{2}}',
    ],
    [
      'TEXT without header_text',
      header({ format: 'TEXT', text: 'Order {{1}}' }),
      'the placeholder {{1}} needs example.header_text with one value',
    ],
    [
      'TEXT with two header_text values',
      header({ format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['a', 'b'] } }),
      'the placeholder {{1}} needs example.header_text with one value',
    ],
    [
      'TEXT with header_text that is not strings',
      header({ format: 'TEXT', text: 'Order {{1}}', example: { header_text: [17] } }),
      'example.header_text must be a list of strings',
    ],
    [
      'TEXT without named examples',
      header({ format: 'TEXT', text: 'Hi {{name}}' }),
      'example.header_text_named_params is required: one entry per named placeholder',
    ],
    [
      'TEXT with the wrong named example',
      header({
        format: 'TEXT',
        text: 'Hi {{name}}',
        example: { header_text_named_params: [{ param_name: 'nom', example: 'Ana' }] },
      }),
      'example.header_text_named_params has nom, which is not a placeholder of the text',
    ],
    [
      'IMAGE without an example',
      header({ format: 'IMAGE' }),
      'format IMAGE needs example.header_handle with at least one media handle',
    ],
    [
      'VIDEO with no handles',
      header({ format: 'VIDEO', example: { header_handle: [] } }),
      'format VIDEO needs example.header_handle with at least one media handle',
    ],
    [
      'DOCUMENT with only a text example',
      header({ format: 'DOCUMENT', example: { header_text: ['a'] } }),
      'format DOCUMENT needs example.header_handle with at least one media handle',
    ],
  ])('a HEADER %s', (_, given, rule) => {
    expect(refusal(given)).toEqual(invalid(`components[0] (HEADER): ${rule}`));
  });

  it.each([
    ['without text', { type: 'FOOTER' }, 'text is required'],
    ['over 60 characters', { type: 'FOOTER', text: long(61) }, 'text is at most 60 characters'],
    [
      'with a placeholder',
      { type: 'FOOTER', text: 'Bye {{1}}!' },
      'text may not hold placeholders',
    ],
  ])('a FOOTER %s', (_, footer, rule) => {
    expect(refusal(template([BODY, footer]))).toEqual(invalid(`components[1] (FOOTER): ${rule}`));
  });

  it.each([
    ['missing', undefined],
    ['empty', []],
    ['more than 10', Array.from({ length: 11 }, () => QUICK_REPLY)],
  ])('BUTTONS with the list %s', (_, list) => {
    expect(refusal(buttons(list))).toEqual(
      invalid('components[1] (BUTTONS): buttons must be a list of 1 to 10 buttons'),
    );
  });

  const url = (n: number) => ({ type: 'URL', text: `Site ${n}`, url: `https://example.com/${n}` });
  const phone = { type: 'PHONE_NUMBER', text: 'Call', phone_number: '14155550100' };
  it.each([
    ['a button that is not an object', ['Yes'], 'buttons[0] must be an object'],
    [
      'an unknown button type',
      [QUICK_REPLY, { type: 'FLOW', text: 'Go' }],
      'buttons[1]: type must be one of QUICK_REPLY, PHONE_NUMBER, URL, OTP or COPY_CODE',
    ],
    [
      'a third URL button',
      [url(1), url(2), url(3)],
      'buttons[2] (URL): at most 2 URL buttons are allowed',
    ],
    [
      'a second PHONE_NUMBER button',
      [phone, QUICK_REPLY, phone],
      'buttons[2] (PHONE_NUMBER): at most 1 PHONE_NUMBER button is allowed',
    ],
    [
      'a button without text',
      [{ type: 'QUICK_REPLY' }],
      'buttons[0] (QUICK_REPLY): text is required',
    ],
    [
      'button text over 25 characters',
      [{ type: 'COPY_CODE', text: long(26) }],
      'buttons[0] (COPY_CODE): text is at most 25 characters',
    ],
    [
      'a PHONE_NUMBER without a number',
      [{ type: 'PHONE_NUMBER', text: 'Call' }],
      'buttons[0] (PHONE_NUMBER): phone_number is required',
    ],
    [
      'a phone number with separators',
      [{ ...phone, phone_number: '+1 415 555 0100' }],
      'buttons[0] (PHONE_NUMBER): phone_number must be digits with an optional leading +, at most 20 characters',
    ],
    [
      'a phone number over 20 characters',
      [{ ...phone, phone_number: '+' + '1'.repeat(20) }],
      'buttons[0] (PHONE_NUMBER): phone_number must be digits with an optional leading +, at most 20 characters',
    ],
    ['a URL without a url', [{ type: 'URL', text: 'Site' }], 'buttons[0] (URL): url is required'],
    [
      'a URL that is not http',
      [{ ...url(1), url: 'ftp://example.com' }],
      'buttons[0] (URL): url must start with http:// or https://',
    ],
    [
      'a URL with {{1}} and no example',
      [{ ...url(1), url: 'https://example.com/{{1}}' }],
      'buttons[0] (URL): a url with {{1}} needs example: a list of one example url',
    ],
    [
      'a URL with {{1}} and two examples',
      [{ ...url(1), url: 'https://example.com/{{1}}', example: ['a', 'b'] }],
      'buttons[0] (URL): a url with {{1}} needs example: a list of one example url',
    ],
    [
      'a URL with {{2}}',
      [{ ...url(1), url: 'https://example.com/{{2}}', example: ['a'] }],
      'buttons[0] (URL): url may hold no placeholder but {{1}}',
    ],
    [
      'an OTP button outside AUTHENTICATION',
      [{ type: 'OTP', text: 'Copy code' }],
      'buttons[0] (OTP): OTP buttons are only allowed in AUTHENTICATION templates',
    ],
  ])('%s', (_, list, rule) => {
    expect(refusal(buttons(list))).toEqual(invalid(`components[1] (BUTTONS) ${rule}`));
  });

  const withButtons = (format: string) =>
    card(format, [{ type: 'BUTTONS', buttons: [QUICK_REPLY] }]);
  it.each([
    ['no cards', undefined, 'components[1] (CAROUSEL): cards must be a list of 2 to 10 cards'],
    ['1 card', [card('IMAGE')], 'components[1] (CAROUSEL): cards must be a list of 2 to 10 cards'],
    [
      '11 cards',
      Array.from({ length: 11 }, () => card('IMAGE')),
      'components[1] (CAROUSEL): cards must be a list of 2 to 10 cards',
    ],
    [
      'a card that is not an object',
      [card('IMAGE'), 'card'],
      'components[1] (CAROUSEL) card 2 must be an object',
    ],
    [
      'a card without components',
      [card('IMAGE'), { components: [] }],
      'components[1] (CAROUSEL) card 2: components must be a non-empty list',
    ],
    [
      'a card without a HEADER',
      [card('IMAGE'), { components: [BODY] }],
      'components[1] (CAROUSEL) card 2: a card needs a HEADER with format IMAGE or VIDEO',
    ],
    [
      'a card without a BODY',
      [card('IMAGE'), { components: card('IMAGE').components.slice(0, 1) }],
      'components[1] (CAROUSEL) card 2: a card needs a BODY',
    ],
    [
      'a card with a TEXT header',
      [card('IMAGE'), card('TEXT')],
      'components[1] (CAROUSEL) card 2 components[0] (HEADER): format must be IMAGE or VIDEO in a carousel card',
    ],
    [
      'a card with a DOCUMENT header',
      [card('DOCUMENT'), card('IMAGE')],
      'components[1] (CAROUSEL) card 1 components[0] (HEADER): format must be IMAGE or VIDEO in a carousel card',
    ],
    [
      'a card with a FOOTER',
      [card('IMAGE', [{ type: 'FOOTER', text: 'Hi' }]), card('IMAGE')],
      'components[1] (CAROUSEL) card 1 components[2] (FOOTER): a card may only hold HEADER, BODY and BUTTONS',
    ],
    [
      'a card inside a card',
      [card('IMAGE', [{ type: 'CAROUSEL', cards: [] }]), card('IMAGE')],
      'components[1] (CAROUSEL) card 1 components[2] (CAROUSEL): a card may only hold HEADER, BODY and BUTTONS',
    ],
    [
      'a card with two BODY components',
      [card('IMAGE', [BODY]), card('IMAGE')],
      'components[1] (CAROUSEL) card 1 components[2] (BODY): only one BODY is allowed',
    ],
    [
      'a card whose header has no handle',
      [card('IMAGE'), { components: [{ type: 'HEADER', format: 'VIDEO' }, BODY] }],
      'components[1] (CAROUSEL) card 2 components[0] (HEADER): format VIDEO needs example.header_handle with at least one media handle',
    ],
    [
      'a card whose body breaks a body rule',
      [
        card('IMAGE'),
        { components: [card('IMAGE').components[0], { type: 'BODY', text: '{{1}} left' }] },
      ],
      'components[1] (CAROUSEL) card 2 components[1] (BODY): text may not start or end with a placeholder',
    ],
    [
      'a card whose button breaks a button rule',
      [
        withButtons('IMAGE'),
        card('IMAGE', [
          { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Go', url: 'example.com' }] },
        ]),
      ],
      'components[1] (CAROUSEL) card 2 components[2] (BUTTONS) buttons[0] (URL): url must start with http:// or https://',
    ],
    [
      'cards with different components',
      [withButtons('IMAGE'), withButtons('VIDEO'), card('IMAGE')],
      'components[1] (CAROUSEL): card 3 has HEADER, BODY but card 1 has HEADER, BODY, BUTTONS; every card needs the same components',
    ],
  ])('a CAROUSEL with %s', (_, cards, message) => {
    expect(refusal(carousel(cards as unknown[]))).toEqual(invalid(message));
  });

  it('compares card components whatever their order', () => {
    const [header, text] = card('IMAGE').components;
    expect(() =>
      parseTemplateDraft(carousel([card('IMAGE'), { components: [text, header] }])),
    ).not.toThrow();
  });
});

describe('placeholdersOf', () => {
  it('lists each placeholder once, in order of first appearance', () => {
    expect(
      placeholdersOf('{{2}} then {{1}}, {{2}} and {{first_name}} {{order_id}} {{first_name}}'),
    ).toEqual({
      positional: [2, 1],
      named: ['first_name', 'order_id'],
    });
  });

  it('ignores what is not a placeholder', () => {
    expect(placeholdersOf('{{First}} {{ 1 }} {{_x}} {{1a}} {1} {{}}')).toEqual({
      positional: [],
      named: [],
    });
  });
});
