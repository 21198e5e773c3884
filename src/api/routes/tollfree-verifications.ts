import { Type, type Static } from 'typebox';
import { conflict, invalidParameter } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import type { TollfreeVerificationRecord } from '../../state/records.js';
import {
  DELETABLE,
  parseVerification,
  UPDATABLE,
  type VerificationFields,
} from '../../tollfree/verification-rules.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { findVisible, ownedBy, visibleTo } from '../owned-resources.js';
import { resourceRoutes } from '../resource-routes.js';
import { Nullable } from '../schemas.js';
import {
  spanBound,
  timeFilterNames,
  timeWindow,
  type Bound,
  type Comparison,
} from '../time-window.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const Body = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'profile_uuid, number, usecase, usecase_summary, message_sample, optin_image_url, optin_type, volume, additional_information, extra_data, terms_and_conditions_link, privacy_policy_link, optin_message, help_message, callback_url, callback_method',
});

const Verification = Type.Object({
  uuid: Type.String(),
  profile_uuid: Type.String(),
  number: Type.String(),
  usecase: Type.String(),
  usecase_summary: Type.String(),
  message_sample: Type.String(),
  optin_image_url: Type.String(),
  optin_type: Type.String(),
  volume: Type.String(),
  additional_information: Type.String(),
  extra_data: Type.String(),
  terms_and_conditions_link: Type.String(),
  privacy_policy_link: Type.String(),
  optin_message: Type.String(),
  help_message: Type.String(),
  status: Type.String(),
  rejection_reason: Type.String(),
  error_message: Type.String(),
  callback_url: Nullable(Type.String()),
  callback_method: Type.String(),
  created: Type.String(),
  last_modified: Type.String(),
  history: Type.Array(
    Type.Object({
      status: Type.String(),
      time: Type.String(),
      error_message: Type.String(),
      rejection_reason: Type.String(),
    }),
  ),
  resource_uri: Type.String(),
});

/** wire-compat-messaging.md: "ISO 8601 with fractional seconds and Z". */
const iso = (ms: number) => new Date(ms).toISOString();

const fieldsOf = (v: TollfreeVerificationRecord): VerificationFields => ({
  profile_uuid: v.profile_uuid,
  number: v.number,
  usecase: v.usecase,
  usecase_summary: v.usecase_summary,
  message_sample: v.message_sample,
  optin_image_url: v.optin_image_url,
  optin_type: v.optin_type,
  volume: v.volume,
  additional_information: v.additional_information,
  extra_data: v.extra_data,
  terms_and_conditions_link: v.terms_and_conditions_link ?? '',
  privacy_policy_link: v.privacy_policy_link ?? '',
  optin_message: v.optin_message ?? '',
  help_message: v.help_message ?? '',
  callback_url: v.callback_url,
  callback_method: v.callback_method,
});

/** A created filter (`YYYY-MM-DD`, a time after it is allowed) → the bounds of the day it names. */
function dayBound(value: string, comparison: Comparison, filter: string): Bound {
  const match = /^(\d{4}-\d{2}-\d{2})([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/.exec(value.trim());
  const start = match ? Date.parse(`${match[1]}T00:00:00Z`) : NaN;
  if (Number.isNaN(start)) throw invalidParameter(`invalid ${filter}: use the format YYYY-MM-DD`);
  return spanBound(start, DAY_MS, comparison);
}

/**
 * Toll-free verification requests (`TollfreeVerification/`) as the messaging document gives
 * them: one active request per number, rejected use cases not resubmitted, updates and deletes
 * only in the statuses it names. An update of a request that needed one sends it back to
 * review as SUBMITTED.
 */
export function tollfreeVerificationRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, clock, tollfree } = context;

  /** The profile must be one the principal sees; the number one it holds. */
  const checkOwnership = async (principal: Principal, fields: VerificationFields) => {
    await findVisible(state.profiles, principal, fields.profile_uuid, 'profile').catch(() => {
      throw invalidParameter(
        `profile_uuid ${fields.profile_uuid} is not a profile of this account`,
      );
    });
    const number = await state.numbers.get(principal.tenant, fields.number);
    if (!number || !visibleTo(number, principal))
      throw invalidParameter(`number ${fields.number} is not a number of this account`);
  };

  resourceRoutes(app, context, {
    path: 'TollfreeVerification',
    tag: 'Toll-free verification',
    what: 'toll-free verification',
    collection: state.tollfreeVerifications,
    view: Verification,
    createBody: Body,
    updateBody: Body,
    outboundUrls: ['callback_url'],
    present: (principal, v): Static<typeof Verification> => ({
      uuid: v.uuid,
      ...fieldsOf(v),
      status: v.status,
      rejection_reason: v.rejection_reason,
      error_message: v.error_message,
      created: iso(v.created),
      last_modified: iso(v.modified),
      history: v.history.map((h) => ({ ...h, time: iso(h.time) })),
      resource_uri: uris.account(principal.authId, 'TollfreeVerification', v.uuid),
    }),
    create: async (principal, body): Promise<TollfreeVerificationRecord> => {
      const fields = parseVerification(body);
      await checkOwnership(principal, fields);
      const earlier = await state.tollfreeVerifications.all(
        principal.tenant,
        `number:${fields.number}`,
      );
      const active = earlier.find((v) => v.status !== 'REJECTED');
      if (active)
        throw conflict(
          `number ${fields.number} already has toll-free verification ${active.uuid} (${active.status})`,
        );
      const refused = earlier
        .flatMap((v) => v.usecase.split(','))
        .filter((u) => fields.usecase.split(',').includes(u));
      if (refused.length > 0)
        throw invalidParameter(
          `usecase ${[...new Set(refused)].join(', ')} was rejected for number ${fields.number} and cannot be submitted again`,
        );
      const now = clock.now();
      return {
        ...ownedBy(principal, now),
        ...fields,
        uuid: newUuid(),
        status: 'SUBMITTED',
        rejection_reason: '',
        error_message: '',
        modified: now,
        history: [{ status: 'SUBMITTED', time: now, error_message: '', rejection_reason: '' }],
      };
    },
    created: (v) => ({ message: 'created', uuid: v.uuid }),
    createdAnswer: Type.Object({
      api_id: Type.String(),
      message: Type.String(),
      uuid: Type.String(),
    }),
    update: async (principal, current, body) => {
      if (!UPDATABLE.includes(current.status))
        throw conflict(
          `toll-free verification ${current.uuid} is ${current.status}: it can be updated only when SUBMITTED or UPDATE_REQUIRED`,
        );
      const fields = parseVerification(body, fieldsOf(current));
      if (fields.profile_uuid !== current.profile_uuid) await checkOwnership(principal, fields);
      const now = clock.now();
      const next = { ...current, ...fields, modified: now };
      // Supplied what review asked for: back to review (a callback says so).
      return current.status === 'UPDATE_REQUIRED'
        ? tollfree.moved(next, 'SUBMITTED', {}, now)
        : next;
    },
    updated: (v) => ({
      message: `Tollfree verification request for ${v.uuid} updated successfully`,
    }),
    afterWrite: async (v) => {
      const last = v.history.at(-1);
      if (v.history.length > 1 && last?.time === v.modified) tollfree.notify(v);
    },
    beforeDelete: async (v) => {
      if (!DELETABLE.includes(v.status))
        throw conflict(
          `toll-free verification ${v.uuid} is ${v.status}: it can be deleted only when SUBMITTED, PROCESSING or UPDATE_REQUIRED`,
        );
    },
    listFilters: {
      query: Type.Object(
        Object.fromEntries(
          ['number', 'status', 'profile_uuid', 'usecase', ...timeFilterNames('created')].map(
            (name) => [name, Type.Optional(Type.String())],
          ),
        ),
      ),
      filter: (q) => {
        const window = timeWindow(q, 'created', clock.now(), dayBound);
        const usecase = q.usecase
          ?.split(',')
          .map((u) => u.trim().toUpperCase())
          .filter(Boolean)
          .join(',');
        const number = q.number?.replace(/^\+/, '');
        return {
          match: (v) =>
            v.created >= window.min &&
            (window.max === undefined || v.created <= window.max) &&
            (!number || v.number === number) &&
            (!q.status || v.status === q.status.toUpperCase()) &&
            (!q.profile_uuid || v.profile_uuid === q.profile_uuid) &&
            (!usecase || v.usecase === usecase),
        };
      },
    },
  });
}
