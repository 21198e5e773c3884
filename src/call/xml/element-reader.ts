import { HTTP_PROTOCOLS, isAbsoluteUrl } from '../../core/absolute-url.js';
import { readHeaderList } from '../../core/header-list.js';
import { AnswerXmlError } from './answer-xml-error.js';
import type { HttpMethod } from './answer-document.js';
import type { XmlElement } from './xml-tree.js';

export interface IntegerRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Reads one element against its rules: the attributes it may carry, each attribute's type, and
 * whether it may hold text or child elements. Every failure is an AnswerXmlError naming the
 * element and the attribute.
 */
export class ElementReader {
  readonly name: string;

  constructor(
    readonly element: XmlElement,
    allowedAttributes: readonly string[],
  ) {
    this.name = element.name;
    for (const attribute of Object.keys(element.attributes)) {
      if (!allowedAttributes.includes(attribute)) {
        const allowed = allowedAttributes.length === 0 ? 'none' : allowedAttributes.join(', ');
        throw new AnswerXmlError(
          this.name,
          `attribute "${attribute}" is not allowed (allowed: ${allowed})`,
          attribute,
        );
      }
    }
  }

  private raw(attribute: string): string | null {
    return Object.hasOwn(this.element.attributes, attribute)
      ? (this.element.attributes[attribute] as string).trim()
      : null;
  }

  private fail(attribute: string, expected: string, value: string): never {
    throw new AnswerXmlError(
      this.name,
      `${attribute} must be ${expected}, got "${value}"`,
      attribute,
    );
  }

  /** Free text; absent or empty reads as null. */
  string(attribute: string): string | null {
    const value = this.raw(attribute);
    return value === null || value === '' ? null : value;
  }

  /** Comma-separated digit sequences (0-9, *, #), e.g. `123,*9` (digitsMatch); absent: none. */
  digitSequences(attribute: string): string[] {
    const value = this.string(attribute);
    if (value === null) return [];
    const patterns = value.split(',').map((p) => p.trim());
    if (patterns.some((p) => !/^[0-9*#]+$/.test(p))) {
      this.fail(attribute, 'digit sequences (0-9, *, #) separated by commas', value);
    }
    return patterns;
  }

  requiredString(attribute: string): string {
    const value = this.string(attribute);
    if (value === null) {
      throw new AnswerXmlError(this.name, `${attribute} is required`, attribute);
    }
    return value;
  }

  /** An http or https URL; absent or empty reads as null. */
  url(attribute: string): string | null {
    const value = this.string(attribute);
    if (value !== null && !isUrl(value, HTTP_PROTOCOLS)) {
      this.fail(attribute, 'an http or https URL', value);
    }
    return value;
  }

  method(attribute: string, fallback: HttpMethod): HttpMethod {
    return this.oneOf(attribute, ['GET', 'POST'], fallback);
  }

  boolean(attribute: string, fallback: boolean): boolean {
    const value = this.raw(attribute);
    if (value === null) return fallback;
    if (value === 'true') return true;
    if (value === 'false') return false;
    return this.fail(attribute, '"true" or "false"', value);
  }

  integer(attribute: string, fallback: number, range: IntegerRange): number;
  integer(attribute: string, fallback: null, range: IntegerRange): number | null;
  integer(attribute: string, fallback: number | null, range: IntegerRange): number | null {
    const value = this.raw(attribute);
    if (value === null) return fallback;
    return this.parseInteger(attribute, value, range);
  }

  parseInteger(attribute: string, value: string, range: IntegerRange): number {
    const parsed = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
    if (!(parsed >= range.min && parsed <= range.max)) {
      this.fail(attribute, `an integer from ${range.min} to ${range.max}`, value);
    }
    return parsed;
  }

  oneOf<const T extends string>(attribute: string, values: readonly T[], fallback: T): T;
  oneOf<const T extends string>(attribute: string, values: readonly T[], fallback: null): T | null;
  oneOf<const T extends string>(
    attribute: string,
    values: readonly T[],
    fallback: T | null,
  ): T | null {
    const value = this.raw(attribute);
    if (value === null) return fallback;
    if (!(values as readonly string[]).includes(value)) {
      this.fail(attribute, describeChoices(values), value);
    }
    return value as T;
  }

  /** The trimmed text content; child elements are refused. */
  text(): string {
    let text = '';
    for (const child of this.element.children) {
      if (child.type === 'element') {
        throw new AnswerXmlError(this.name, `<${child.name}> is not allowed inside <${this.name}>`);
      }
      text += child.text;
    }
    return text.trim();
  }

  requiredText(what: string): string {
    const text = this.text();
    if (text === '') throw new AnswerXmlError(this.name, `text (${what}) is required`);
    return text;
  }

  /** Text that must be a URL using one of `protocols`, e.g. `['http:', 'https:']`. */
  urlText(protocols: readonly string[], description: string): string {
    const url = this.requiredText(description);
    if (!isUrl(url, protocols)) {
      throw new AnswerXmlError(this.name, `text must be ${description}, got "${clip(url)}"`);
    }
    return url;
  }

  /** A `name=value,name=value` list (SIP or WebSocket headers): core/header-list's rules. */
  headerList(attribute: string): Record<string, string> {
    const value = this.string(attribute);
    if (value === null) return {};
    const reading = readHeaderList(value);
    if (reading.ok) return reading.headers;
    if (reading.problem === 'repeated') {
      throw new AnswerXmlError(this.name, `${attribute} names "${reading.name}" twice`, attribute);
    }
    return this.fail(attribute, 'a list of name=value pairs separated by commas', value);
  }

  /** An element that takes neither text nor children. */
  empty(): void {
    const text = this.text();
    if (text !== '')
      throw new AnswerXmlError(this.name, `text is not allowed, got "${clip(text)}"`);
  }

  /** Child elements, each checked against `allowed`; text between them is refused. */
  children(allowed: readonly string[]): XmlElement[] {
    const children: XmlElement[] = [];
    for (const child of this.element.children) {
      if (child.type === 'text') {
        if (child.text.trim() !== '') {
          throw new AnswerXmlError(this.name, `text is not allowed, got "${clip(child.text)}"`);
        }
      } else if (!allowed.includes(child.name)) {
        throw new AnswerXmlError(
          this.name,
          `<${child.name}> is not allowed inside <${this.name}> (allowed: ${allowed.join(', ')})`,
        );
      } else {
        children.push(child);
      }
    }
    return children;
  }
}

export { HTTP_PROTOCOLS, WEBSOCKET_PROTOCOLS } from '../../core/absolute-url.js';

/** The answer document's URLs follow the rule of the REST parameters (core/absolute-url). */
export function isUrl(value: string, protocols: readonly string[]): boolean {
  return isAbsoluteUrl(value, protocols);
}

/** `MAN or WOMAN`, `inbound, outbound or both`. */
export function describeChoices(values: readonly string[]): string {
  if (values.length <= 1) return values.join('');
  return `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
}

function clip(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 40 ? `${trimmed.slice(0, 40)}...` : trimmed;
}
