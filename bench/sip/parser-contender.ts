import type { UasFields } from './uas-fields.js';

/** One SIP parser in the comparison, wrapped so that all of them do the same job. */
export interface ParserContender {
  id: 'voxgate' | 'sipjs' | 'drachtio';
  label: string;
  /** Package version, or the commit for voxgate's own. */
  version: string;
  /** The function called, as a reader would find it in the package. */
  entry: string;
  /** What the entry point parses up front, and what only when a field is first read. */
  eagerness: string;
  /** Parses the bytes as they came off the wire and reads the fields; throws if it cannot. */
  read(bytes: Buffer): UasFields;
}
