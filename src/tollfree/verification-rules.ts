import { HTTP_PROTOCOLS, isAbsoluteUrl } from '../core/absolute-url.js';
import { invalidParameter, missingParameter } from '../core/errors.js';
import { countryOf, normaliseE164 } from '../core/phone-number.js';
import type { TollfreeStatus, TollfreeVerificationRecord } from '../state/records.js';

export const USE_CASES = [
  '2FA',
  'ACCOUNT_NOTIFICATION',
  'CUSTOMER_CARE',
  'DELIVERY_NOTIFICATION',
  'FRAUD_ALERT',
  'HIGHER_EDUCATION',
  'MARKETING',
  'POLLING_VOTING',
  'PUBLIC_SERVICE_ANNOUNCEMENT',
  'SECURITY_ALERT',
];
export const OPTIN_TYPES = ['VERBAL', 'WEB_FORM', 'PAPER_FORM', 'VIA_TEXT', 'MOBILE_QR_CODE'];
export const VOLUMES = [
  '1,000',
  '10,000',
  '100,000',
  '250,000',
  '500,000',
  '750,000',
  '1,000,000',
  '5,000,000',
  '10,000,000+',
];

/** NANP toll-free area codes. */
const TOLL_FREE = /^1(800|833|844|855|866|877|888)\d{7}$/;

/** Whether E.164 digits are a US or Canadian (NANP) toll-free number. */
export const isTollFree = (number: string): boolean => TOLL_FREE.test(number);

/** The fields a client gives, checked and normalised. */
export type VerificationFields = Required<
  Pick<
    TollfreeVerificationRecord,
    | 'profile_uuid'
    | 'number'
    | 'usecase'
    | 'usecase_summary'
    | 'message_sample'
    | 'optin_image_url'
    | 'optin_type'
    | 'volume'
    | 'additional_information'
    | 'extra_data'
    | 'terms_and_conditions_link'
    | 'privacy_policy_link'
    | 'optin_message'
    | 'help_message'
    | 'callback_url'
    | 'callback_method'
  >
>;

type Json = Record<string, unknown>;

/**
 * A create body (no `current`) or an update body over `current` → the request's fields, every
 * rule of the messaging document checked; throws a 400 naming the field, 422 when one is missing.
 */
export function parseVerification(raw: Json, current?: VerificationFields): VerificationFields {
  // The official SDK documents `opt_in_image_url` and `opt_in_type` beside the API's names.
  const body: Json = {
    ...raw,
    optin_image_url: raw.optin_image_url ?? raw.opt_in_image_url,
    optin_type: raw.optin_type ?? raw.opt_in_type,
  };
  if (current && body.number !== undefined && body.number !== current.number)
    throw invalidParameter('number cannot change: create a request for the other number');
  const given = (name: keyof VerificationFields) =>
    body[name] === undefined ? current?.[name] : body[name];
  const text = (name: keyof VerificationFields, max: number, required: boolean): string => {
    const value = given(name);
    if (value === undefined || value === null || value === '') {
      if (required) throw missingParameter(`missing required parameter: ${name}`);
      return '';
    }
    if (typeof value !== 'string') throw invalidParameter(`${name} must be a string`);
    if ([...value].length > max)
      throw invalidParameter(`${name} is at most ${max.toLocaleString('en-US')} characters`);
    return value.trim();
  };
  const oneOf = (name: keyof VerificationFields, values: string[]) => {
    const value = text(name, 40, true);
    const found = values.find((v) => v.toUpperCase() === value.toUpperCase());
    if (!found) throw invalidParameter(`${name} must be one of ${values.join(', ')}`);
    return found;
  };

  const rawNumber = text('number', 20, true);
  const number = normaliseE164(rawNumber);
  if (!number || !TOLL_FREE.test(number) || !['US', 'CA'].includes(countryOf(number)))
    throw invalidParameter(`number ${rawNumber} is not a US or Canadian toll-free number`);
  const usecases = text('usecase', 500, true)
    .split(',')
    .map((u) => u.trim().toUpperCase())
    .filter(Boolean);
  if (usecases.length === 0) throw missingParameter('missing required parameter: usecase');
  for (const u of usecases)
    if (!USE_CASES.includes(u))
      throw invalidParameter(`usecase ${u} is not one of ${USE_CASES.join(', ')}`);
  if (new Set(usecases).size !== usecases.length)
    throw invalidParameter('usecase names a use case twice');
  const optinUrls = text('optin_image_url', 2000, true)
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  for (const url of optinUrls)
    if (!isAbsoluteUrl(url, HTTP_PROTOCOLS))
      throw invalidParameter(`optin_image_url ${url} is not an http or https URL`);
  const url = (name: keyof VerificationFields) => {
    const value = text(name, 2048, false);
    if (value !== '' && !isAbsoluteUrl(value, HTTP_PROTOCOLS))
      throw invalidParameter(`${name} must be an http or https URL`);
    return value;
  };
  const callbackUrl = url('callback_url');
  const method = text('callback_method', 4, false).toUpperCase() || 'POST';
  if (method !== 'GET' && method !== 'POST')
    throw invalidParameter('callback_method must be GET or POST');
  return {
    profile_uuid: text('profile_uuid', 64, true),
    number,
    usecase: usecases.join(','),
    usecase_summary: text('usecase_summary', 500, true),
    message_sample: text('message_sample', 1000, true),
    optin_image_url: optinUrls.join(','),
    optin_type: oneOf('optin_type', OPTIN_TYPES),
    volume: oneOf('volume', VOLUMES),
    additional_information: text('additional_information', 500, false),
    extra_data: text('extra_data', 100, false),
    terms_and_conditions_link: url('terms_and_conditions_link'),
    privacy_policy_link: url('privacy_policy_link'),
    optin_message: text('optin_message', 500, false),
    help_message: text('help_message', 500, false),
    callback_url: callbackUrl || null,
    callback_method: method,
  };
}

/** The messaging document's transitions, and the review moves into and out of PROCESSING. */
const MOVES: Record<TollfreeStatus, TollfreeStatus[]> = {
  SUBMITTED: ['PROCESSING', 'APPROVED', 'REJECTED', 'UPDATE_REQUIRED'],
  PROCESSING: ['APPROVED', 'REJECTED', 'UPDATE_REQUIRED'],
  UPDATE_REQUIRED: ['SUBMITTED', 'APPROVED', 'REJECTED'],
  APPROVED: [],
  REJECTED: [],
};

export function canMove(from: TollfreeStatus, to: TollfreeStatus): boolean {
  return MOVES[from].includes(to);
}

/** messaging document: update only in SUBMITTED or UPDATE_REQUIRED. */
export const UPDATABLE: TollfreeStatus[] = ['SUBMITTED', 'UPDATE_REQUIRED'];
/** messaging document: delete only in SUBMITTED, PROCESSING or UPDATE_REQUIRED. */
export const DELETABLE: TollfreeStatus[] = ['SUBMITTED', 'PROCESSING', 'UPDATE_REQUIRED'];
