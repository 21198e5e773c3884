import { Type, type Static } from 'typebox';
import { conflict } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import { formatTime } from '../../core/record-time.js';
import type { ProfileRecord } from '../../state/records.js';
import { parseProfile, updateProfile, type ProfileFields } from '../../tollfree/profile-rules.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { resolveSubaccount } from '../ownership.js';
import { resourceRoutes } from '../resource-routes.js';

/** The bodies are checked by the profile rules, which name the field and the rule. */
const Body = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'profile_alias, customer_type, entity_type, company_name, ein, ein_issuing_country, vertical, stock_symbol, stock_exchange, alt_business_id_type, website, address, authorized_contact, business_contact_email, doing_business_as, plivo_subaccount',
});

const Profile = Type.Object({
  profile_uuid: Type.String(),
  profile_alias: Type.String(),
  customer_type: Type.String(),
  entity_type: Type.String(),
  company_name: Type.String(),
  ein: Type.String(),
  ein_issuing_country: Type.String(),
  vertical: Type.String(),
  stock_symbol: Type.String(),
  stock_exchange: Type.String(),
  alt_business_id_type: Type.String(),
  website: Type.String(),
  address: Type.Record(Type.String(), Type.String()),
  authorized_contact: Type.Record(Type.String(), Type.String()),
  business_contact_email: Type.String(),
  doing_business_as: Type.String(),
  created_on: Type.String(),
  resource_uri: Type.String(),
});

const fieldsOf = (p: ProfileRecord): ProfileFields => {
  const { account, subaccount, created, modified, profile_uuid, ...fields } = p;
  void [account, subaccount, created, modified, profile_uuid];
  return fields;
};

/**
 * Compliance profiles (`Profile/`): the business a toll-free verification request names, with
 * the fields the official SDK sends, checked (EIN for US entities, website, e-mails, address).
 */
export function profileRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, clock } = context;
  resourceRoutes(app, context, {
    path: 'Profile',
    tag: 'Profile',
    what: 'profile',
    collection: state.profiles,
    view: Profile,
    createBody: Body,
    updateBody: Body,
    present: (principal, p): Static<typeof Profile> => ({
      profile_uuid: p.profile_uuid,
      ...fieldsOf(p),
      created_on: formatTime(p.created)!,
      resource_uri: uris.account(principal.authId, 'Profile', p.profile_uuid),
    }),
    create: async (principal, body) => {
      const fields = parseProfile(body);
      const now = clock.now();
      const sub = body.plivo_subaccount ?? body.subaccount;
      return {
        account: principal.tenant,
        subaccount: await resolveSubaccount(
          state,
          principal,
          typeof sub === 'string' ? sub : undefined,
        ),
        created: now,
        modified: now,
        profile_uuid: newUuid(),
        ...fields,
      };
    },
    created: (p) => ({ message: 'Profile created successfully.', profile_uuid: p.profile_uuid }),
    createdAnswer: Type.Object({
      api_id: Type.String(),
      message: Type.String(),
      profile_uuid: Type.String(),
    }),
    update: async (_principal, current, body) => ({
      ...current,
      ...updateProfile(fieldsOf(current), body),
      modified: clock.now(),
    }),
    updated: (p) => ({ message: 'Profile updated successfully.', profile_uuid: p.profile_uuid }),
    updatedAnswer: Type.Object({
      api_id: Type.String(),
      message: Type.String(),
      profile_uuid: Type.String(),
    }),
    beforeDelete: async (p) => {
      const requests = await state.tollfreeVerifications.all(
        p.account,
        `profile:${p.profile_uuid}`,
      );
      if (requests.length > 0)
        throw conflict(
          `profile ${p.profile_uuid} is in use by toll-free verification ${requests.map((r) => r.uuid).join(', ')}`,
        );
    },
  });
}
