import type { AnswerDocument } from './answer-document.js';
import { AnswerXmlError } from './answer-xml-error.js';
import { parseAnswerXml } from './parse-answer-xml.js';

/** Documents kept: an application answers most calls with the same few. */
const MAX_DOCUMENTS = 256;

/**
 * parseAnswerXml, remembering the last documents by their exact text: a parsed document is
 * immutable, so calls that fetch the same XML share one parse. Invalid documents are
 * remembered too, with their error.
 */
export class AnswerXmlCache {
  private readonly documents = new Map<string, AnswerDocument | AnswerXmlError>();

  parse(text: string): AnswerDocument {
    let parsed = this.documents.get(text);
    if (parsed === undefined) {
      try {
        parsed = parseAnswerXml(text);
      } catch (error) {
        if (!(error instanceof AnswerXmlError)) throw error;
        parsed = error;
      }
      if (this.documents.size >= MAX_DOCUMENTS) {
        this.documents.delete(this.documents.keys().next().value!);
      }
      this.documents.set(text, parsed);
    }
    if (parsed instanceof AnswerXmlError) throw parsed;
    return parsed;
  }
}

/** The process's cache (the documents are the customers', the same for every call layer). */
export const answerXmlCache = new AnswerXmlCache();
