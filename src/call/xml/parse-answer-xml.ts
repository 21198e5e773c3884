import type {
  AnswerDocument,
  PreAnswerChild,
  PreAnswerInstruction,
  ResponseInstruction,
} from './answer-document.js';
import { readDtmf, readHangup, readRedirect, readUnsupported } from './call-flow-instructions.js';
import { readDial } from './dial-instruction.js';
import { readConference } from './conference-instruction.js';
import { ElementReader } from './element-reader.js';
import { readGetDigits, readGetInput } from './input-instructions.js';
import { readPlay, readSpeak, readWait } from './prompt-instructions.js';
import { readStream } from './stream-instruction.js';
import { readRecord } from './record-instruction.js';
import { parseXmlTree, type XmlElement } from './xml-tree.js';

/** Wire notes: the elements allowed directly in <Response>. */
export const RESPONSE_ELEMENTS = [
  'Speak',
  'Play',
  'GetDigits',
  'GetInput',
  'Record',
  'Dial',
  'Message',
  'Redirect',
  'Wait',
  'Hangup',
  'PreAnswer',
  'Conference',
  'DTMF',
  'MultiPartyCall',
  'Stream',
] as const;

/** Wire notes: PreAnswer runs early media with these children. */
export const PRE_ANSWER_ELEMENTS = [
  'Play',
  'Speak',
  'GetDigits',
  'Wait',
  'Redirect',
  'Message',
  'DTMF',
] as const;

/**
 * Parses and validates answer XML (from an answer_url, an action URL or a Redirect) into its
 * instructions, defaults applied. Pure: no I/O. Throws AnswerXmlError for anything the document
 * may not contain; the caller picks the hangup cause for where the document came from.
 */
export function parseAnswerXml(text: string): AnswerDocument {
  const root = parseXmlTree(text, ['Speak']);
  const reader = new ElementReader(root, []);
  return { instructions: reader.children(RESPONSE_ELEMENTS).map(readResponseChild) };
}

function readResponseChild(element: XmlElement): ResponseInstruction {
  switch (element.name) {
    case 'Hangup':
      return readHangup(element);
    case 'GetInput':
      return readGetInput(element);
    case 'Dial':
      return readDial(element);
    case 'Stream':
      return readStream(element);
    case 'PreAnswer':
      return readPreAnswer(element);
    case 'Record':
      return readRecord(element);
    case 'Conference':
      return readConference(element);
    case 'MultiPartyCall':
      return readUnsupported(element, element.name);
    default:
      return readPreAnswerChild(element);
  }
}

function readPreAnswer(element: XmlElement): PreAnswerInstruction {
  const reader = new ElementReader(element, []);
  return {
    kind: 'PreAnswer',
    instructions: reader.children(PRE_ANSWER_ELEMENTS).map(readPreAnswerChild),
  };
}

/** The elements PreAnswer shares with Response; callers have checked the name. */
function readPreAnswerChild(element: XmlElement): PreAnswerChild {
  switch (element.name) {
    case 'Speak':
      return readSpeak(element);
    case 'Play':
      return readPlay(element);
    case 'Wait':
      return readWait(element);
    case 'GetDigits':
      return readGetDigits(element);
    case 'Redirect':
      return readRedirect(element);
    case 'DTMF':
      return readDtmf(element);
    case 'Message':
      return { ...readUnsupported(element, 'Message'), kind: 'Message' };
    default:
      throw new Error(`unchecked element <${element.name}>`);
  }
}
