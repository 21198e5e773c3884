/**
 * Hangup causes as the public voice API reports them: `HangupCauseCode` and `HangupCauseName` on
 * the hangup callback, `hangup_cause_code` and `hangup_cause_name` on the call record. Codes and
 * names are wire values; clients match on both, so the names keep their odd spelling and case.
 */
export const HANGUP_CAUSES = [
  { code: 0, name: 'Unknown' },
  { code: 1000, name: 'Canceled' },
  { code: 2000, name: 'Invalid Destination Address' },
  { code: 2010, name: 'Destination Out Of Service' },
  { code: 2020, name: 'Endpoint Not Registered' },
  { code: 2060, name: 'Loop Detected' },
  { code: 3000, name: 'No Answer' },
  { code: 3010, name: 'Busy Line' },
  { code: 3020, name: 'Rejected' },
  { code: 3040, name: 'Forbidden' },
  { code: 3050, name: 'Unallocated number' },
  { code: 3070, name: 'Request timeout' },
  { code: 4000, name: 'Normal Hangup' },
  { code: 4010, name: 'End Of XML Instructions' },
  { code: 4240, name: 'sip_auth_failed' },
  { code: 4250, name: 'sip_auth_timeout' },
  { code: 5000, name: 'Network Error' },
  { code: 5010, name: 'Internal Error' },
  { code: 5020, name: 'Routing Error' },
  { code: 5030, name: 'Concurrency Limit Breached' },
  { code: 6000, name: 'Scheduled Hangup' },
  { code: 6010, name: 'Ring Timeout Reached' },
  { code: 6020, name: 'Media Timeout' },
  { code: 7011, name: 'Error Reaching Answer URL' },
  { code: 7012, name: 'Error Reaching Action URL' },
  { code: 7014, name: 'Error Reaching Redirect URL' },
  { code: 8011, name: 'Invalid Answer XML' },
  { code: 8012, name: 'Invalid Action XML' },
  { code: 8014, name: 'Invalid Redirect XML' },
  { code: 9100, name: 'Machine Detected' },
] as const;

export type HangupCauseName = (typeof HANGUP_CAUSES)[number]['name'];
export type HangupCauseCode = (typeof HANGUP_CAUSES)[number]['code'];

export interface HangupCause {
  readonly code: HangupCauseCode;
  readonly name: HangupCauseName;
}

const byName = new Map<string, HangupCause>(HANGUP_CAUSES.map((c) => [c.name, c]));
const byCode = new Map<number, HangupCause>(HANGUP_CAUSES.map((c) => [c.code, c]));

/** The cause with this exact name; a name outside the list does not compile. */
export function hangupCause(name: HangupCauseName): HangupCause {
  return byName.get(name) as HangupCause;
}

/** Looks up a name received from outside (exact, case-sensitive match). */
export function findHangupCauseByName(name: string): HangupCause | undefined {
  return byName.get(name);
}

export function findHangupCauseByCode(code: number): HangupCause | undefined {
  return byCode.get(code);
}

/** Where a document of answer XML came from: the answer_url, an action URL, or a Redirect. */
export type XmlDocumentSource = 'answer' | 'action' | 'redirect';

/** The cause that ends a call whose XML from `source` is invalid (8011, 8012 or 8014). */
export const INVALID_XML_HANGUP_CAUSE: Readonly<Record<XmlDocumentSource, HangupCause>> = {
  answer: hangupCause('Invalid Answer XML'),
  action: hangupCause('Invalid Action XML'),
  redirect: hangupCause('Invalid Redirect XML'),
};

/** The cause that ends a call when the URL of `source` cannot be reached (7011, 7012 or 7014). */
export const UNREACHABLE_XML_URL_HANGUP_CAUSE: Readonly<Record<XmlDocumentSource, HangupCause>> = {
  answer: hangupCause('Error Reaching Answer URL'),
  action: hangupCause('Error Reaching Action URL'),
  redirect: hangupCause('Error Reaching Redirect URL'),
};
