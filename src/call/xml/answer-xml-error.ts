/**
 * Answer XML that cannot be run: it does not parse, is too large, or breaks the element,
 * attribute or value rules. `message` names the element (and attribute, when one is at fault)
 * so the client can fix its document; the call layer ends the call with 8011, 8012 or 8014.
 */
export class AnswerXmlError extends Error {
  /** The element at fault, e.g. `Speak`; `Response` for document-level problems. */
  readonly element: string;
  /** The attribute at fault, when the problem is one attribute's value or presence. */
  readonly attribute: string | null;

  constructor(element: string, problem: string, attribute: string | null = null) {
    super(`${element}: ${problem}`);
    this.name = 'AnswerXmlError';
    this.element = element;
    this.attribute = attribute;
  }
}
