import { bodyObject } from '../core/body-object.js';
import { invalidParameter, missingParameter } from '../core/errors.js';
import { normaliseE164 } from '../core/phone-number.js';
import type { ProfileRecord } from '../state/records.js';

/** What a profile holds besides its owner, id and times: checked and normalised. */
export type ProfileFields = Omit<
  ProfileRecord,
  'account' | 'subaccount' | 'created' | 'modified' | 'profile_uuid'
>;

export const CUSTOMER_TYPES = ['DIRECT', 'RESELLER'];
export const ENTITY_TYPES = ['PRIVATE', 'PUBLIC', 'NON_PROFIT', 'GOVERNMENT', 'INDIVIDUAL'];
/** The industry verticals US carriers' registries use. */
export const VERTICALS = [
  'PROFESSIONAL',
  'REAL_ESTATE',
  'HEALTHCARE',
  'HUMAN_RESOURCES',
  'ENERGY',
  'ENTERTAINMENT',
  'RETAIL',
  'TRANSPORTATION',
  'AGRICULTURE',
  'INSURANCE',
  'POSTAL',
  'EDUCATION',
  'HOSPITALITY',
  'FINANCIAL',
  'POLITICAL',
  'GAMBLING',
  'LEGAL',
  'CONSTRUCTION',
  'NGO',
  'MANUFACTURING',
  'GOVERNMENT',
  'TECHNOLOGY',
  'COMMUNICATION',
];
export const ALT_BUSINESS_ID_TYPES = ['NONE', 'DUNS', 'GIIN', 'LEI'];
export const STOCK_EXCHANGES = [
  'NONE',
  'NASDAQ',
  'NYSE',
  'AMEX',
  'AMX',
  'ASX',
  'B3',
  'BME',
  'BSE',
  'FRA',
  'ICEX',
  'JPX',
  'JSE',
  'KRX',
  'LON',
  'NSE',
  'OMX',
  'SEHK',
  'SSE',
  'STO',
  'SWX',
  'SZSE',
  'TSX',
  'TWSE',
  'VSE',
  'OTHER',
];
export const SENIORITIES = ['C_LEVEL', 'VP', 'DIRECTOR', 'MANAGER', 'OTHER'];

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** The IRS writes an EIN as two digits, a dash and seven digits. */
const US_EIN = /^\d{2}-?\d{7}$/;
const TAX_ID = /^[A-Za-z0-9-]{1,21}$/;
const COUNTRY = /^[A-Z]{2}$/;
const WEBSITE = /^(https?:\/\/)?([A-Za-z0-9-]+\.)+[A-Za-z]{2,}(\/\S*)?$/;

type Json = Record<string, unknown>;

/** A create body → the profile's fields; throws a 400 naming the field (422 when missing). */
export function parseProfile(body: Json): ProfileFields {
  return checkProfile(body, undefined);
}

/** An update body over `current`: the fields given replace theirs, and the whole is checked. */
export function updateProfile(current: ProfileFields, body: Json): ProfileFields {
  return checkProfile(body, current);
}

function checkProfile(body: Json, current: ProfileFields | undefined): ProfileFields {
  const field = (name: string) =>
    body[name] === undefined ? current?.[name as keyof ProfileFields] : body[name];
  const text = (name: string, max: number, required = true): string => {
    const value = field(name);
    if (value === undefined || value === null || value === '') {
      if (required) throw missingParameter(`missing required parameter: ${name}`);
      return '';
    }
    if (typeof value !== 'string') throw invalidParameter(`${name} must be a string`);
    if ([...value].length > max) throw invalidParameter(`${name} is at most ${max} characters`);
    return value.trim();
  };
  const oneOf = (name: string, values: string[], required = true): string => {
    const value = text(name, 40, required).toUpperCase();
    if (value !== '' && !values.includes(value))
      throw invalidParameter(`${name} must be one of ${values.join(', ')}`);
    return value;
  };

  const entityType = oneOf('entity_type', ENTITY_TYPES);
  const country = (text('ein_issuing_country', 2, false) || 'US').toUpperCase();
  if (!COUNTRY.test(country))
    throw invalidParameter('ein_issuing_country must be a two-letter country code (ISO 3166-1)');
  const ein = text('ein', 21, entityType !== 'INDIVIDUAL');
  if (ein !== '' && country === 'US' && !US_EIN.test(ein))
    throw invalidParameter(
      'ein must be a US EIN: two digits, a dash and seven digits (12-3456789)',
    );
  if (ein !== '' && !TAX_ID.test(ein))
    throw invalidParameter('ein is 1 to 21 letters, digits or dashes');
  const stockSymbol = text('stock_symbol', 10, entityType === 'PUBLIC');
  const stockExchange = oneOf('stock_exchange', STOCK_EXCHANGES, entityType === 'PUBLIC');
  const website = text('website', 255);
  if (!WEBSITE.test(website))
    throw invalidParameter('website must be a web address (https://example.com or example.com)');
  const businessEmail = text('business_contact_email', 255);
  if (!EMAIL.test(businessEmail))
    throw invalidParameter('business_contact_email is not an e-mail address');

  return {
    profile_alias: text('profile_alias', 100),
    customer_type: oneOf('customer_type', CUSTOMER_TYPES),
    entity_type: entityType,
    company_name: text('company_name', 100),
    ein,
    ein_issuing_country: country,
    vertical: oneOf('vertical', VERTICALS),
    stock_symbol: stockSymbol,
    stock_exchange: stockExchange,
    alt_business_id_type: oneOf('alt_business_id_type', ALT_BUSINESS_ID_TYPES, false) || 'NONE',
    website,
    address: parseAddress(field('address')),
    authorized_contact: parseContact(field('authorized_contact')),
    business_contact_email: businessEmail,
    doing_business_as: text('doing_business_as', 255, false),
  };
}

function object(value: unknown, name: string): Json {
  if (value === undefined || value === null)
    throw missingParameter(`missing required parameter: ${name}`);
  return bodyObject(value, name);
}

function member(parent: Json, parentName: string, name: string, max: number): string {
  const value = parent[name];
  if (typeof value !== 'string' || value.trim() === '')
    throw missingParameter(`missing required parameter: ${parentName}.${name}`);
  if ([...value].length > max)
    throw invalidParameter(`${parentName}.${name} is at most ${max} characters`);
  return value.trim();
}

function parseAddress(value: unknown): ProfileRecord['address'] {
  const address = object(value, 'address');
  const country = member(address, 'address', 'country', 10).toUpperCase();
  if (!COUNTRY.test(country))
    throw invalidParameter('address.country must be a two-letter country code (ISO 3166-1)');
  return {
    street: member(address, 'address', 'street', 100),
    city: member(address, 'address', 'city', 100),
    state: member(address, 'address', 'state', 20),
    postal_code: member(address, 'address', 'postal_code', 10),
    country,
  };
}

function parseContact(value: unknown): ProfileRecord['authorized_contact'] {
  const contact = object(value, 'authorized_contact');
  const email = member(contact, 'authorized_contact', 'email', 255);
  if (!EMAIL.test(email))
    throw invalidParameter('authorized_contact.email is not an e-mail address');
  const phone = normaliseE164(member(contact, 'authorized_contact', 'phone', 20));
  if (!phone) throw invalidParameter('authorized_contact.phone is not a valid E.164 number');
  const seniority = member(contact, 'authorized_contact', 'seniority', 20).toUpperCase();
  if (!SENIORITIES.includes(seniority))
    throw invalidParameter(`authorized_contact.seniority must be one of ${SENIORITIES.join(', ')}`);
  return {
    first_name: member(contact, 'authorized_contact', 'first_name', 100),
    last_name: member(contact, 'authorized_contact', 'last_name', 100),
    phone,
    email,
    title: member(contact, 'authorized_contact', 'title', 100),
    seniority,
  };
}
