import { Type } from 'typebox';
import { invalidParameter } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import type { TrunkRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { ownedBy, visibleTo } from '../owned-resources.js';
import { resourceRoutes } from '../resource-routes.js';
import { Nullable, SrtpPolicyField } from '../schemas.js';
import { DEFAULT_SRTP_POLICY } from '../../call/srtp-policy.js';

const Name = Type.String({ maxLength: 100, description: 'at most 100 characters' });
const Direction = Type.Literal('inbound', {
  description: 'inbound (only inbound trunks are supported)',
});
const PrimaryUri = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'the uri_uuid of one of your origination URIs',
});
const FallbackUri = Type.String({
  maxLength: 64,
  description: 'the uri_uuid of one of your origination URIs, or empty for none',
});

const Trunk = Type.Object({
  trunk_id: Type.String(),
  name: Nullable(Type.String()),
  trunk_direction: Type.String(),
  primary_uri_uuid: Type.String(),
  fallback_uri_uuid: Nullable(Type.String()),
  srtp: Type.String(),
  resource_uri: Type.String(),
});

const TrunkChanged = Type.Object({
  api_id: Type.String(),
  message: Type.String(),
  trunk_id: Type.String(),
});

/**
 * A trunk may route only to origination URIs of its own account (the main account's trunks to
 * the main account's URIs, a subaccount's to its own). That keeps the subaccount boundary: a
 * subaccount never finds its URI held by a trunk it cannot see, and deleting a subaccount with
 * its resources never leaves another account's trunk pointing at nothing.
 */
async function requireTrunkUri(
  state: State,
  principal: Principal,
  owner: string | null,
  field: string,
  uuid: string,
): Promise<void> {
  const uri = await state.originationUris.get(principal.tenant, uuid);
  if (!uri || !visibleTo(uri, principal)) {
    throw invalidParameter(
      `invalid ${field}: must be the uri_uuid of one of your origination URIs; ${uuid} is not`,
    );
  }
  if (uri.subaccount !== owner) {
    throw invalidParameter(
      `invalid ${field}: origination URI ${uuid} belongs to ${uri.subaccount ? `subaccount ${uri.subaccount}` : 'the main account'}; ` +
        `a trunk can use only URIs of its own account (${owner ? `subaccount ${owner}` : 'the main account'})`,
    );
  }
}

/** Checks a trunk's destinations: both usable, and the fallback different from the primary. */
async function checkDestinations(
  state: State,
  principal: Principal,
  trunk: Pick<TrunkRecord, 'subaccount' | 'primary_uri_uuid' | 'fallback_uri_uuid'>,
): Promise<void> {
  await requireTrunkUri(
    state,
    principal,
    trunk.subaccount,
    'primary_uri_uuid',
    trunk.primary_uri_uuid,
  );
  if (trunk.fallback_uri_uuid === null) return;
  if (trunk.fallback_uri_uuid === trunk.primary_uri_uuid) {
    throw invalidParameter('invalid fallback_uri_uuid: must be different from primary_uri_uuid');
  }
  await requireTrunkUri(
    state,
    principal,
    trunk.subaccount,
    'fallback_uri_uuid',
    trunk.fallback_uri_uuid,
  );
}

const CreateBody = Type.Object(
  {
    name: Type.Optional(Name),
    trunk_direction: Direction,
    primary_uri_uuid: PrimaryUri,
    fallback_uri_uuid: Type.Optional(FallbackUri),
    srtp: Type.Optional(SrtpPolicyField),
  },
  { required: ['trunk_direction', 'primary_uri_uuid'] },
);

const UpdateBody = Type.Object({
  name: Type.Optional(Name),
  trunk_direction: Type.Optional(Direction),
  primary_uri_uuid: Type.Optional(PrimaryUri),
  fallback_uri_uuid: Type.Optional(FallbackUri),
  srtp: Type.Optional(SrtpPolicyField),
});

export function trunkRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, clock } = context;
  resourceRoutes(app, context, {
    path: 'SipTrunk/Trunk',
    tag: 'Trunk',
    what: 'trunk',
    collection: state.trunks,
    view: Trunk,
    createBody: CreateBody,
    updateBody: UpdateBody,
    present: (principal, t) => ({
      trunk_id: t.trunk_id,
      name: t.name,
      trunk_direction: t.trunk_direction,
      primary_uri_uuid: t.primary_uri_uuid,
      fallback_uri_uuid: t.fallback_uri_uuid,
      srtp: t.srtp ?? DEFAULT_SRTP_POLICY,
      resource_uri: uris.account(principal.authId, 'SipTrunk', 'Trunk', t.trunk_id),
    }),
    create: async (principal, body) => {
      const record: TrunkRecord = {
        ...ownedBy(principal, clock.now()),
        trunk_id: newUuid(),
        name: body.name ?? null,
        trunk_direction: body.trunk_direction,
        primary_uri_uuid: body.primary_uri_uuid,
        fallback_uri_uuid: body.fallback_uri_uuid || null,
        ...(body.srtp && { srtp: body.srtp }),
      };
      await checkDestinations(state, principal, record);
      return record;
    },
    created: (t) => ({ message: 'Trunk created successfully.', trunk_id: t.trunk_id }),
    createdAnswer: TrunkChanged,
    update: async (principal, current, body) => {
      const next: TrunkRecord = {
        ...current,
        name: body.name ?? current.name,
        primary_uri_uuid: body.primary_uri_uuid ?? current.primary_uri_uuid,
        fallback_uri_uuid:
          body.fallback_uri_uuid === undefined
            ? current.fallback_uri_uuid
            : body.fallback_uri_uuid || null,
        ...(body.srtp && { srtp: body.srtp }),
      };
      await checkDestinations(state, principal, next);
      return next;
    },
    updated: (t) => ({ message: 'Trunk updated successfully.', trunk_id: t.trunk_id }),
    updatedAnswer: TrunkChanged,
  });
}
