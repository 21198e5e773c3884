import { invalidParameter, missingParameter, type ApiError } from '../../core/errors.js';

/**
 * Checks a chat-app message template before it is submitted upstream, so a client learns what is
 * wrong from us, naming the field, instead of from an opaque upstream rejection minutes later.
 *
 * Problems name where they are: `components[i] (TYPE)` for a component (indices from 0),
 * `components[i] (CAROUSEL) card j components[k] (TYPE)` for a card's component (cards numbered
 * from 1, as a person counts them) and `components[i] (BUTTONS) buttons[b] (TYPE)` for a button.
 */

const CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
/** Also the order types are listed in when two carousel cards are compared. */
const COMPONENT_TYPES = ['HEADER', 'BODY', 'FOOTER', 'BUTTONS', 'CAROUSEL'] as const;
const CARD_COMPONENT_TYPES: readonly ComponentType[] = ['HEADER', 'BODY', 'BUTTONS'];
const HEADER_FORMATS = ['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION'] as const;
const BUTTON_TYPES = ['QUICK_REPLY', 'PHONE_NUMBER', 'URL', 'OTP', 'COPY_CODE'] as const;

export type TemplateCategory = (typeof CATEGORIES)[number];
export type ComponentType = (typeof COMPONENT_TYPES)[number];
export type HeaderFormat = (typeof HEADER_FORMATS)[number];
export type ButtonType = (typeof BUTTON_TYPES)[number];

/** Limits the upstream API enforces, in characters (code points) or counts. */
const LIMITS = {
  bodyText: 1024,
  headerText: 60,
  footerText: 60,
  buttonText: 25,
  phoneNumber: 20,
  minButtons: 1,
  maxButtons: 10,
  urlButtons: 2,
  phoneButtons: 1,
  minCards: 2,
  maxCards: 10,
} as const;

const NAME = /^[a-z0-9_]{1,512}$/;
/** BCP-47 as upstream writes it: `en`, `en_US`, `es_419`. */
const LANGUAGE = /^[a-z]{2,3}(_([A-Z]{2}|\d{3}))?$/;
const PHONE_NUMBER = /^\+?\d+$/;
const HTTP_URL = /^https?:\/\//i;
const PLACEHOLDER = '\\{\\{(?:(\\d+)|([a-z][a-z0-9_]*))\\}\\}';
const PLACEHOLDERS = new RegExp(PLACEHOLDER, 'g');
const AT_EDGE = new RegExp(`^${PLACEHOLDER}|${PLACEHOLDER}$`);

export interface NamedParamExample {
  param_name: string;
  example: string;
}

export interface TemplateExample {
  header_text?: string[];
  header_handle?: string[];
  header_text_named_params?: NamedParamExample[];
  /** Example sets, each with one value per positional placeholder of the body. */
  body_text?: string[][];
  body_text_named_params?: NamedParamExample[];
}

export interface TemplateButton {
  type: ButtonType;
  text: string;
  phone_number?: string;
  url?: string;
  /** The example URL for a URL button whose url holds `{{1}}`. */
  example?: string[];
}

export interface TemplateCard {
  components: TemplateComponent[];
}

export interface TemplateComponent {
  type: ComponentType;
  /** HEADER only. */
  format?: HeaderFormat;
  text?: string;
  example?: TemplateExample;
  /** BUTTONS only. */
  buttons?: TemplateButton[];
  /** CAROUSEL only. */
  cards?: TemplateCard[];
}

export interface TemplateDraft {
  name: string;
  language: string;
  category: TemplateCategory;
  components: TemplateComponent[];
  allow_category_change?: boolean;
}

type Json = Record<string, unknown>;

/** Where a list of components sits: the template itself, or one carousel card. */
interface Scope {
  category: TemplateCategory;
  /** '' for the template, else e.g. `components[1] (CAROUSEL) card 2`. */
  card: string;
}

/**
 * Reads a template as a client sent it and returns it typed, keeping only the fields described
 * by the types above; throws the first problem found as a 422 (a required top-level field is
 * missing) or a 400 naming the field or component and the rule.
 */
export function parseTemplateDraft(body: unknown): TemplateDraft {
  if (!isObject(body)) throw invalidParameter('the template must be a JSON object');
  const name = requiredString(body, 'name');
  if (!NAME.test(name))
    throw invalidParameter('name must be 1 to 512 lower-case letters, digits or underscores');
  const language = requiredString(body, 'language');
  if (!LANGUAGE.test(language))
    throw invalidParameter(
      'language must be a code such as en or en_US: two or three lower-case letters, optionally _ and two upper-case letters or three digits',
    );
  const category = requiredString(body, 'category');
  if (!isOneOf(CATEGORIES, category))
    throw invalidParameter(`category must be one of ${listed(CATEGORIES)}`);
  const allowChange = body.allow_category_change;
  if (!isAbsent(allowChange) && typeof allowChange !== 'boolean')
    throw invalidParameter('allow_category_change must be true or false');
  if (isAbsent(body.components)) throw missingParameter('missing required parameter: components');

  const components = parseComponentList(body.components, { category, card: '' });
  if (!components.some((c) => c.type === 'BODY'))
    throw invalidParameter('components must include a BODY');
  const draft: TemplateDraft = { name, language, category, components };
  if (typeof allowChange === 'boolean') draft.allow_category_change = allowChange;
  return draft;
}

/**
 * The placeholders of a text, each once, in order of first appearance: `{{1}}` is positional,
 * `{{first_name}}` named (a lower-case letter, then lower-case letters, digits or underscores).
 */
export function placeholdersOf(text: string): { positional: number[]; named: string[] } {
  const positional: number[] = [];
  const named: string[] = [];
  for (const [, digits, name] of text.matchAll(PLACEHOLDERS)) {
    if (digits !== undefined) {
      const n = Number(digits);
      if (!positional.includes(n)) positional.push(n);
    } else if (name !== undefined && !named.includes(name)) named.push(name);
  }
  return { positional, named };
}

function parseComponentList(raw: unknown, scope: Scope): TemplateComponent[] {
  if (!Array.isArray(raw) || raw.length === 0)
    throw problem(scope.card, 'components must be a non-empty list');
  const seen = new Set<ComponentType>();
  return raw.map((entry: unknown, k) => {
    const index = `${scope.card ? `${scope.card} ` : ''}components[${k}]`;
    if (!isObject(entry)) throw invalidParameter(`${index} must be an object`);
    const type = entry.type;
    if (!isOneOf(COMPONENT_TYPES, type))
      throw invalidParameter(`${index}: type must be one of ${listed(COMPONENT_TYPES)}`);
    const where = `${index} (${type})`;
    if (scope.card && !CARD_COMPONENT_TYPES.includes(type))
      throw problem(where, `a card may only hold ${listed(CARD_COMPONENT_TYPES, 'and')}`);
    if (seen.has(type)) throw problem(where, `only one ${type} is allowed`);
    seen.add(type);
    switch (type) {
      case 'HEADER':
        return parseHeader(entry, where, scope);
      case 'BODY':
        return parseBody(entry, where);
      case 'FOOTER':
        return parseFooter(entry, where);
      case 'BUTTONS':
        return { type, buttons: parseButtons(entry, where, scope.category) };
      case 'CAROUSEL':
        return { type, cards: parseCards(entry, where, scope.category) };
    }
  });
}

function parseBody(entry: Json, where: string): TemplateComponent {
  const text = requiredText(entry, where, LIMITS.bodyText);
  const { positional, named } = placeholdersOf(text);
  if (positional.length > 0 && named.length > 0)
    throw problem(where, 'text may not mix positional and named placeholders');
  if (AT_EDGE.test(text.trim()))
    throw problem(where, 'text may not start or end with a placeholder');
  positional.forEach((n, i) => {
    if (n !== i + 1)
      throw problem(
        where,
        `placeholders must be numbered from {{1}} in order of first appearance without gaps: {{${n}}} comes where {{${i + 1}}} belongs`,
      );
  });
  const example = parseExample(entry.example, where);
  if (positional.length > 0) checkExampleSets(positional.length, example?.body_text, where);
  if (named.length > 0)
    checkNamedExamples(named, example?.body_text_named_params, 'body_text_named_params', where);
  return withExample({ type: 'BODY', text }, example);
}

function checkExampleSets(placeholders: number, sets: string[][] | undefined, where: string): void {
  if (!sets || sets.length === 0)
    throw problem(
      where,
      `example.body_text is required: at least one example set of ${plural(placeholders, 'value')}, one per placeholder`,
    );
  sets.forEach((set, s) => {
    if (set.length !== placeholders)
      throw problem(
        where,
        `example.body_text[${s}] holds ${plural(set.length, 'value')} but the text has ${plural(placeholders, 'placeholder')}`,
      );
  });
}

/** Named placeholders need exactly one example each, and no example without a placeholder. */
function checkNamedExamples(
  names: string[],
  entries: NamedParamExample[] | undefined,
  key: 'body_text_named_params' | 'header_text_named_params',
  where: string,
): void {
  if (!entries || entries.length === 0)
    throw problem(where, `example.${key} is required: one entry per named placeholder`);
  const given = new Set<string>();
  for (const { param_name: name } of entries) {
    if (given.has(name)) throw problem(where, `example.${key} has ${name} more than once`);
    if (!names.includes(name))
      throw problem(where, `example.${key} has ${name}, which is not a placeholder of the text`);
    given.add(name);
  }
  const missing = names.find((name) => !given.has(name));
  if (missing) throw problem(where, `example.${key} needs an entry for {{${missing}}}`);
}

function parseHeader(entry: Json, where: string, scope: Scope): TemplateComponent {
  const format = entry.format;
  if (isAbsent(format)) throw problem(where, 'format is required');
  if (!isOneOf(HEADER_FORMATS, format))
    throw problem(where, `format must be one of ${listed(HEADER_FORMATS)}`);
  if (scope.card && format !== 'IMAGE' && format !== 'VIDEO')
    throw problem(where, 'format must be IMAGE or VIDEO in a carousel card');
  if (format === 'LOCATION') return { type: 'HEADER', format };
  if (format === 'TEXT') return parseTextHeader(entry, where);
  const example = parseExample(entry.example, where);
  if (!example?.header_handle?.length)
    throw problem(
      where,
      `format ${format} needs example.header_handle with at least one media handle`,
    );
  return { type: 'HEADER', format, example };
}

function parseTextHeader(entry: Json, where: string): TemplateComponent {
  const text = requiredText(entry, where, LIMITS.headerText);
  const { positional, named } = placeholdersOf(text);
  if (positional.length + named.length > 1)
    throw problem(where, 'text may hold at most one placeholder');
  const example = parseExample(entry.example, where);
  const [number] = positional;
  if (number !== undefined) {
    if (number !== 1) throw problem(where, `the placeholder must be {{1}}, not {{${number}}}`);
    if (example?.header_text?.length !== 1)
      throw problem(where, 'the placeholder {{1}} needs example.header_text with one value');
  }
  if (named.length > 0)
    checkNamedExamples(named, example?.header_text_named_params, 'header_text_named_params', where);
  return withExample({ type: 'HEADER', format: 'TEXT', text }, example);
}

function parseFooter(entry: Json, where: string): TemplateComponent {
  const text = requiredText(entry, where, LIMITS.footerText);
  const { positional, named } = placeholdersOf(text);
  if (positional.length + named.length > 0) throw problem(where, 'text may not hold placeholders');
  return { type: 'FOOTER', text };
}

function parseButtons(entry: Json, where: string, category: TemplateCategory): TemplateButton[] {
  const raw = entry.buttons;
  if (!Array.isArray(raw) || raw.length < LIMITS.minButtons || raw.length > LIMITS.maxButtons)
    throw problem(
      where,
      `buttons must be a list of ${LIMITS.minButtons} to ${LIMITS.maxButtons} buttons`,
    );
  const counts = new Map<ButtonType, number>();
  return raw.map((button: unknown, b) => {
    const index = `${where} buttons[${b}]`;
    if (!isObject(button)) throw invalidParameter(`${index} must be an object`);
    const type = button.type;
    if (!isOneOf(BUTTON_TYPES, type))
      throw invalidParameter(`${index}: type must be one of ${listed(BUTTON_TYPES)}`);
    const seen = (counts.get(type) ?? 0) + 1;
    counts.set(type, seen);
    return parseButton(button, type, seen, `${index} (${type})`, category);
  });
}

function parseButton(
  button: Json,
  type: ButtonType,
  seen: number,
  where: string,
  category: TemplateCategory,
): TemplateButton {
  if (type === 'URL' && seen > LIMITS.urlButtons)
    throw problem(where, `at most ${LIMITS.urlButtons} URL buttons are allowed`);
  if (type === 'PHONE_NUMBER' && seen > LIMITS.phoneButtons)
    throw problem(where, `at most ${LIMITS.phoneButtons} PHONE_NUMBER button is allowed`);
  if (type === 'OTP' && category !== 'AUTHENTICATION')
    throw problem(where, 'OTP buttons are only allowed in AUTHENTICATION templates');
  const text = requiredText(button, where, LIMITS.buttonText);
  if (type === 'PHONE_NUMBER') return { type, text, phone_number: parsePhoneNumber(button, where) };
  if (type === 'URL') return { type, text, ...parseUrl(button, where) };
  return { type, text };
}

function parsePhoneNumber(button: Json, where: string): string {
  const phone = button.phone_number;
  if (isAbsent(phone) || phone === '') throw problem(where, 'phone_number is required');
  if (typeof phone !== 'string' || !PHONE_NUMBER.test(phone) || phone.length > LIMITS.phoneNumber)
    throw problem(
      where,
      `phone_number must be digits with an optional leading +, at most ${LIMITS.phoneNumber} characters`,
    );
  return phone;
}

function parseUrl(button: Json, where: string): { url: string; example?: string[] } {
  const url = button.url;
  if (isAbsent(url) || url === '') throw problem(where, 'url is required');
  if (typeof url !== 'string' || !HTTP_URL.test(url))
    throw problem(where, 'url must start with http:// or https://');
  const { positional, named } = placeholdersOf(url);
  if (named.length > 0 || positional.some((n) => n !== 1))
    throw problem(where, 'url may hold no placeholder but {{1}}');
  if (positional.length === 0) return { url };
  const example = button.example;
  if (!isStringList(example) || example.length !== 1)
    throw problem(where, 'a url with {{1}} needs example: a list of one example url');
  return { url, example: [...example] };
}

function parseCards(entry: Json, where: string, category: TemplateCategory): TemplateCard[] {
  const raw = entry.cards;
  if (!Array.isArray(raw) || raw.length < LIMITS.minCards || raw.length > LIMITS.maxCards)
    throw problem(where, `cards must be a list of ${LIMITS.minCards} to ${LIMITS.maxCards} cards`);
  let firstTypes: string | undefined;
  return raw.map((card: unknown, c) => {
    const label = `${where} card ${c + 1}`;
    if (!isObject(card)) throw invalidParameter(`${label} must be an object`);
    const components = parseComponentList(card.components, { category, card: label });
    const present = new Set(components.map((component) => component.type));
    if (!present.has('HEADER'))
      throw problem(label, 'a card needs a HEADER with format IMAGE or VIDEO');
    if (!present.has('BODY')) throw problem(label, 'a card needs a BODY');
    const types = COMPONENT_TYPES.filter((type) => present.has(type)).join(', ');
    if (firstTypes === undefined) firstTypes = types;
    else if (types !== firstTypes)
      throw problem(
        where,
        `card ${c + 1} has ${types} but card 1 has ${firstTypes}; every card needs the same components`,
      );
    return { components };
  });
}

/** Checks the shape of every example field given; which ones a component needs is its own rule. */
function parseExample(raw: unknown, where: string): TemplateExample | undefined {
  if (isAbsent(raw)) return undefined;
  if (!isObject(raw)) throw problem(where, 'example must be an object');
  const example: TemplateExample = {};
  for (const key of ['header_text', 'header_handle'] as const) {
    const value = raw[key];
    if (isAbsent(value)) continue;
    if (!isStringList(value)) throw problem(where, `example.${key} must be a list of strings`);
    example[key] = [...value];
  }
  const sets = raw.body_text;
  if (!isAbsent(sets)) {
    if (!Array.isArray(sets) || !sets.every(isStringList))
      throw problem(
        where,
        'example.body_text must be a list of example sets, each a list of strings',
      );
    example.body_text = sets.map((set: string[]) => [...set]);
  }
  for (const key of ['header_text_named_params', 'body_text_named_params'] as const) {
    const value = raw[key];
    if (isAbsent(value)) continue;
    if (!Array.isArray(value) || !value.every(isNamedParamExample))
      throw problem(
        where,
        `example.${key} must be a list of objects with a param_name and an example, both strings`,
      );
    example[key] = value.map(({ param_name, example }) => ({ param_name, example }));
  }
  return example;
}

function requiredString(body: Json, name: string): string {
  const value = body[name];
  if (isAbsent(value)) throw missingParameter(`missing required parameter: ${name}`);
  if (typeof value !== 'string') throw invalidParameter(`${name} must be a string`);
  return value;
}

function requiredText(entry: Json, where: string, max: number): string {
  const text = entry.text;
  if (isAbsent(text)) throw problem(where, 'text is required');
  if (typeof text !== 'string') throw problem(where, 'text must be a string');
  if (text.trim() === '') throw problem(where, 'text is required');
  if ([...text].length > max)
    throw problem(where, `text is at most ${max.toLocaleString('en-US')} characters`);
  return text;
}

const withExample = (
  component: TemplateComponent,
  example: TemplateExample | undefined,
): TemplateComponent => (example ? { ...component, example } : component);

/** A 400 for a rule broken at `where`; `where` is empty for a rule of the whole template. */
const problem = (where: string, rule: string): ApiError =>
  invalidParameter(where ? `${where}: ${rule}` : rule);

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON null counts as leaving an optional field out. */
const isAbsent = (value: unknown): value is undefined | null =>
  value === undefined || value === null;

const isOneOf = <T extends string>(list: readonly T[], value: unknown): value is T =>
  typeof value === 'string' && (list as readonly string[]).includes(value);

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

const isNamedParamExample = (value: unknown): value is NamedParamExample =>
  isObject(value) && typeof value.param_name === 'string' && typeof value.example === 'string';

const listed = (items: readonly string[], last = 'or'): string =>
  `${items.slice(0, -1).join(', ')} ${last} ${items.at(-1)}`;

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;
