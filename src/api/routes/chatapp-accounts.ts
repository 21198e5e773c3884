import { Type, type Static } from 'typebox';
import { invalidParameter } from '../../core/errors.js';
import { randomHex } from '../../core/ids.js';
import { normaliseE164 } from '../../core/phone-number.js';
import { formatTime } from '../../core/record-time.js';
import type { ChatAppAccountRecord, ChatAppPhoneNumber } from '../../state/records.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { ownedBy, visibleTo } from '../owned-resources.js';
import { resourceRoutes } from '../resource-routes.js';
import { HttpMethod, HttpUrl, Nullable } from '../schemas.js';

const BizAccountId = Type.String({
  pattern: '^[0-9]{1,32}$',
  description: 'the upstream business account id (digits)',
});
const Secret = (what: string) =>
  Type.String({ minLength: 8, maxLength: 1024, description: `${what} (8 to 1,024 characters)` });
const PhoneNumbers = Type.Array(
  Type.Object({
    number: Type.String({ description: 'a number of this account, E.164' }),
    phone_number_id: Type.String({
      pattern: '^[0-9]{1,32}$',
      description: 'the id upstream gives the number (digits)',
    }),
  }),
  { maxItems: 100, description: 'at most 100 numbers' },
);
const Name = Type.String({ maxLength: 100, description: 'at most 100 characters' });
const OptionalUrl = Type.Union([HttpUrl, Type.Literal('')], {
  description: 'an http or https URL, or empty for none',
});

const CreateBody = Type.Object(
  {
    biz_account_id: BizAccountId,
    name: Type.Optional(Name),
    access_token: Secret('the upstream access token'),
    app_secret: Secret('the upstream app secret'),
    verify_token: Type.Optional(Secret('the token upstream presents when it checks the webhook')),
    webhook_url: Type.Optional(OptionalUrl),
    webhook_method: Type.Optional(HttpMethod),
    phone_numbers: Type.Optional(PhoneNumbers),
  },
  { required: ['biz_account_id', 'access_token', 'app_secret'] },
);

const UpdateBody = Type.Object({
  name: Type.Optional(Name),
  access_token: Type.Optional(Secret('the upstream access token')),
  app_secret: Type.Optional(Secret('the upstream app secret')),
  verify_token: Type.Optional(Secret('the token upstream presents when it checks the webhook')),
  webhook_url: Type.Optional(OptionalUrl),
  webhook_method: Type.Optional(HttpMethod),
  phone_numbers: Type.Optional(PhoneNumbers),
});

// Every field that leaves; the access token, app secret and verify token are not among them.
const BusinessAccount = Type.Object({
  biz_account_id: Type.String(),
  name: Nullable(Type.String()),
  phone_numbers: Type.Array(Type.Object({ number: Type.String(), phone_number_id: Type.String() })),
  webhook_url: Nullable(Type.String()),
  webhook_method: Type.String(),
  upstream_webhook_url: Type.String(),
  created_on: Type.String(),
  resource_uri: Type.String(),
});

const Created = Type.Object({
  api_id: Type.String(),
  message: Type.String(),
  biz_account_id: Type.String(),
  upstream_webhook_url: Type.String(),
  verify_token: Type.String(),
});

/**
 * Chat-app business accounts (`ChatApp/BusinessAccount/`): the upstream account, its secrets
 * and its numbers. The verify token is shown once, in the answer to the create, with the URL
 * to give upstream as the webhook callback.
 */
export function chatAppAccountRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, clock } = context;
  const upstreamWebhook = (id: string) => uris.service('ChatApp', 'Webhook', id);

  /** Each number must be one this account holds and sees, named once. */
  const checkNumbers = async (
    principal: Principal,
    given: Static<typeof PhoneNumbers>,
  ): Promise<ChatAppPhoneNumber[]> => {
    const checked: ChatAppPhoneNumber[] = [];
    for (const [k, entry] of given.entries()) {
      const number = normaliseE164(entry.number);
      const held = number ? await state.numbers.get(principal.tenant, number) : null;
      if (!number || !held || !visibleTo(held, principal))
        throw invalidParameter(
          `phone_numbers[${k}].number ${entry.number} is not a number of this account`,
        );
      if (checked.some((c) => c.number === number || c.phone_number_id === entry.phone_number_id))
        throw invalidParameter(`phone_numbers[${k}] names a number or phone_number_id twice`);
      checked.push({ number, phone_number_id: entry.phone_number_id });
    }
    return checked;
  };

  resourceRoutes(app, context, {
    path: 'ChatApp/BusinessAccount',
    tag: 'Chat-app business account',
    what: 'business account',
    collection: state.chatAppAccounts,
    view: BusinessAccount,
    createBody: CreateBody,
    updateBody: UpdateBody,
    outboundUrls: ['webhook_url'],
    audit: {
      kind: 'chatapp_account',
      id: (a) => a.biz_account_id,
      credentials: ['access_token', 'app_secret', 'verify_token'],
    },
    present: (principal, a): Static<typeof BusinessAccount> => ({
      biz_account_id: a.biz_account_id,
      name: a.name,
      phone_numbers: a.phone_numbers,
      webhook_url: a.webhook_url,
      webhook_method: a.webhook_method,
      upstream_webhook_url: upstreamWebhook(a.biz_account_id),
      created_on: formatTime(a.created)!,
      resource_uri: uris.account(principal.authId, 'ChatApp', 'BusinessAccount', a.biz_account_id),
    }),
    create: async (principal, body): Promise<ChatAppAccountRecord> => {
      const now = clock.now();
      return {
        ...ownedBy(principal, now),
        modified: now,
        biz_account_id: body.biz_account_id,
        name: body.name ?? null,
        access_token: body.access_token,
        app_secret: body.app_secret,
        verify_token: body.verify_token ?? randomHex(20),
        webhook_url: body.webhook_url || null,
        webhook_method: body.webhook_method ?? 'POST',
        phone_numbers: await checkNumbers(principal, body.phone_numbers ?? []),
      };
    },
    created: (a) => ({
      message: 'created',
      biz_account_id: a.biz_account_id,
      upstream_webhook_url: upstreamWebhook(a.biz_account_id),
      verify_token: a.verify_token,
    }),
    createdAnswer: Created,
    update: async (principal, current, body) => ({
      ...current,
      modified: clock.now(),
      name: body.name ?? current.name,
      access_token: body.access_token ?? current.access_token,
      app_secret: body.app_secret ?? current.app_secret,
      verify_token: body.verify_token ?? current.verify_token,
      webhook_url: body.webhook_url === undefined ? current.webhook_url : body.webhook_url || null,
      webhook_method: body.webhook_method ?? current.webhook_method,
      phone_numbers:
        body.phone_numbers === undefined
          ? current.phone_numbers
          : await checkNumbers(principal, body.phone_numbers),
    }),
    updated: () => ({ message: 'changed' }),
  });
}
