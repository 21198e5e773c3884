import { Type, type Static } from 'typebox';
import { newNumericId } from '../../core/ids.js';
import { subaccountIndex } from '../../state/collection.js';
import type { ApplicationRecord } from '../../state/records.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { formatTime } from '../../core/record-time.js';
import { resolveSubaccount } from '../ownership.js';
import { resourceRoutes } from '../resource-routes.js';
import { HttpMethod, HttpUrl, Nullable } from '../schemas.js';

const AppName = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}$',
  description:
    '1 to 100 letters, digits, spaces, dots, hyphens or underscores, starting with a letter or digit',
});
const Flag = Type.Boolean({ description: 'true or false' });
const OptionalUrl = Type.Union([HttpUrl, Type.Literal('')], {
  description: 'an http or https URL, or empty',
});

const Settings = {
  answer_url: HttpUrl,
  answer_method: Type.Optional(HttpMethod),
  hangup_url: Type.Optional(OptionalUrl),
  hangup_method: Type.Optional(HttpMethod),
  fallback_answer_url: Type.Optional(OptionalUrl),
  fallback_method: Type.Optional(HttpMethod),
  message_url: Type.Optional(OptionalUrl),
  message_method: Type.Optional(HttpMethod),
  default_number_app: Type.Optional(Flag),
  default_endpoint_app: Type.Optional(Flag),
  subaccount: Type.Optional(Type.String()),
};

const CreateBody = Type.Object(
  { app_name: AppName, ...Settings },
  { required: ['app_name', 'answer_url'] },
);
const UpdateBody = Type.Partial(Type.Object({ app_name: AppName, ...Settings }));

const Application = Type.Object({
  app_id: Type.String(),
  app_name: Type.String(),
  answer_url: Type.String(),
  answer_method: Type.String(),
  hangup_url: Type.String(),
  hangup_method: Type.String(),
  fallback_answer_url: Type.String(),
  fallback_method: Type.String(),
  message_url: Type.String(),
  message_method: Type.String(),
  default_app: Type.Boolean(),
  default_number_app: Type.Boolean(),
  default_endpoint_app: Type.Boolean(),
  enabled: Type.Boolean(),
  sip_uri: Type.String(),
  sub_account: Nullable(Type.String()),
  created: Type.String(),
  resource_uri: Type.String(),
});

export function applicationRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, clock, sipDomain } = context;

  const present = (principal: Principal, a: ApplicationRecord): Static<typeof Application> => ({
    app_id: a.app_id,
    app_name: a.app_name,
    answer_url: a.answer_url,
    answer_method: a.answer_method,
    hangup_url: a.hangup_url ?? '',
    hangup_method: a.hangup_method,
    fallback_answer_url: a.fallback_answer_url ?? '',
    fallback_method: a.fallback_method,
    message_url: a.message_url ?? '',
    message_method: a.message_method,
    default_app: a.default_number_app,
    default_number_app: a.default_number_app,
    default_endpoint_app: a.default_endpoint_app,
    enabled: true,
    sip_uri: `sip:${a.app_id}@${sipDomain}`,
    sub_account: a.subaccount,
    created: formatTime(a.created)!,
    resource_uri: uris.account(principal.authId, 'Application', a.app_id),
  });

  /** At most one default number app and one default endpoint app per (sub)account. */
  const clearOtherDefaults = async (chosen: ApplicationRecord) => {
    if (!chosen.default_number_app && !chosen.default_endpoint_app) return;
    const index = chosen.subaccount ? subaccountIndex(chosen.subaccount) : undefined;
    for (const other of await state.applications.all(chosen.account, index)) {
      if (other.app_id === chosen.app_id || other.subaccount !== chosen.subaccount) continue;
      const next = {
        ...other,
        default_number_app: chosen.default_number_app ? false : other.default_number_app,
        default_endpoint_app: chosen.default_endpoint_app ? false : other.default_endpoint_app,
      };
      if (
        next.default_number_app !== other.default_number_app ||
        next.default_endpoint_app !== other.default_endpoint_app
      ) {
        await state.applications.update(next, other);
      }
    }
  };

  resourceRoutes(app, context, {
    path: 'Application',
    tag: 'Application',
    what: 'application',
    collection: state.applications,
    view: Application,
    createBody: CreateBody,
    updateBody: UpdateBody,
    outboundUrls: ['answer_url', 'hangup_url', 'fallback_answer_url', 'message_url'],
    present,
    create: async (principal, b) => {
      const now = clock.now();
      return {
        account: principal.tenant,
        subaccount: await resolveSubaccount(state, principal, b.subaccount),
        created: now,
        modified: now,
        app_id: newNumericId(17),
        app_name: b.app_name,
        answer_url: b.answer_url,
        answer_method: b.answer_method ?? 'POST',
        // Without a hangup URL the hangup request goes to the answer URL.
        hangup_url: b.hangup_url || b.answer_url,
        hangup_method: b.hangup_method ?? 'POST',
        fallback_answer_url: b.fallback_answer_url || null,
        fallback_method: b.fallback_method ?? 'POST',
        message_url: b.message_url || null,
        message_method: b.message_method ?? 'POST',
        default_number_app: b.default_number_app ?? false,
        default_endpoint_app: b.default_endpoint_app ?? false,
      };
    },
    created: (a) => ({ message: 'created', app_id: a.app_id }),
    createdAnswer: Type.Object({
      api_id: Type.String(),
      message: Type.String(),
      app_id: Type.String(),
    }),
    update: async (principal, current, b) => ({
      ...current,
      subaccount:
        b.subaccount === undefined
          ? current.subaccount
          : await resolveSubaccount(state, principal, b.subaccount),
      modified: clock.now(),
      app_name: b.app_name ?? current.app_name,
      answer_url: b.answer_url ?? current.answer_url,
      answer_method: b.answer_method ?? current.answer_method,
      hangup_url: b.hangup_url === undefined ? current.hangup_url : b.hangup_url || null,
      hangup_method: b.hangup_method ?? current.hangup_method,
      fallback_answer_url:
        b.fallback_answer_url === undefined
          ? current.fallback_answer_url
          : b.fallback_answer_url || null,
      fallback_method: b.fallback_method ?? current.fallback_method,
      message_url: b.message_url === undefined ? current.message_url : b.message_url || null,
      message_method: b.message_method ?? current.message_method,
      default_number_app: b.default_number_app ?? current.default_number_app,
      default_endpoint_app: b.default_endpoint_app ?? current.default_endpoint_app,
    }),
    updated: () => ({ message: 'changed' }),
    afterWrite: clearOtherDefaults,
    // Numbers and endpoints that pointed at it are left without an application.
    afterDelete: async (found) => {
      const attached = `app:${found.app_id}`;
      for (const n of await state.numbers.all(found.account, attached)) {
        await state.numbers.update({ ...n, app_id: null }, n);
      }
      for (const e of await state.endpoints.all(found.account, attached)) {
        await state.endpoints.update({ ...e, app_id: null }, e);
      }
    },
    listFilters: {
      query: Type.Object({
        app_name: Type.Optional(Type.String({ description: 'text the name contains' })),
        subaccount: Type.Optional(Type.String()),
      }),
      filter: ({ app_name, subaccount }) => {
        const needle = app_name?.toLowerCase();
        return {
          subaccount,
          match: needle ? (a) => a.app_name.toLowerCase().includes(needle) : undefined,
        };
      },
    },
  });
}
