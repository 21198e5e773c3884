import { randomInt } from 'node:crypto';
import { Type } from 'typebox';
import { conflict, invalidParameter } from '../../core/errors.js';
import { MAX_IP_SET_ENTRIES, parseIpSet } from '../../call/incoming-carriers.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { ownedBy } from '../owned-resources.js';
import { resourceRoutes } from '../resource-routes.js';

const Name = Type.String({ minLength: 1, maxLength: 100, description: '1 to 100 characters' });
const IpSet = Type.String({
  minLength: 1,
  maxLength: 4096,
  description: `comma-separated IPv4 or IPv6 addresses and CIDR ranges, at most ${MAX_IP_SET_ENTRIES}`,
});

const IncomingCarrier = Type.Object({
  carrier_id: Type.String(),
  name: Type.String(),
  ip_set: Type.String(),
  voice: Type.Boolean(),
  sms: Type.Boolean(),
  resource_uri: Type.String(),
});

const CreateBody = Type.Object({ name: Name, ip_set: IpSet }, { required: ['name', 'ip_set'] });
const UpdateBody = Type.Object({ name: Type.Optional(Name), ip_set: Type.Optional(IpSet) });

const Created = Type.Object({
  api_id: Type.String(),
  message: Type.String(),
  carrier_id: Type.String(),
});

function ipSet(text: string): string[] {
  const parsed = parseIpSet(text);
  if ('problem' in parsed) throw invalidParameter(`invalid ip_set: ${parsed.problem}`);
  return parsed.entries;
}

/** A carrier_id as the public API writes them: fourteen digits. */
const newCarrierId = () =>
  String(randomInt(10_000_000, 100_000_000)) + String(randomInt(0, 1e6)).padStart(6, '0');

/**
 * IncomingCarrier/: the carriers that send calls to the account's numbers, each known by the
 * addresses it sends from. A number's `carrier` names one by its carrier_id, and with
 * VOXGATE_INBOUND_CARRIERS=enforce (the default) its calls are taken from those addresses only
 * (src/call/incoming-carriers.ts).
 */
export function incomingCarrierRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, clock } = context;
  resourceRoutes(app, context, {
    path: 'IncomingCarrier',
    tag: 'IncomingCarrier',
    what: 'incoming carrier',
    collection: state.incomingCarriers,
    view: IncomingCarrier,
    createBody: CreateBody,
    updateBody: UpdateBody,
    present: (principal, c) => ({
      carrier_id: c.carrier_id,
      name: c.name,
      ip_set: c.ip_set.join(','),
      voice: c.voice,
      sms: c.sms,
      resource_uri: uris.account(principal.authId, 'IncomingCarrier', c.carrier_id),
    }),
    create: async (principal, body) => ({
      ...ownedBy(principal, clock.now()),
      carrier_id: newCarrierId(),
      name: body.name,
      ip_set: ipSet(body.ip_set),
      voice: true,
      sms: false,
    }),
    created: (c) => ({ message: 'created', carrier_id: c.carrier_id }),
    createdAnswer: Created,
    update: async (_principal, current, body) => ({
      ...current,
      name: body.name ?? current.name,
      ip_set: body.ip_set === undefined ? current.ip_set : ipSet(body.ip_set),
    }),
    updated: () => ({ message: 'changed' }),
    // A number whose carrier went would take calls from nowhere: named, and kept.
    beforeDelete: async (carrier) => {
      const numbers = (await state.numbers.all(carrier.account)).filter(
        (n) => n.carrier === carrier.carrier_id,
      );
      if (numbers.length > 0) {
        const named = numbers
          .slice(0, 5)
          .map((n) => n.number)
          .join(', ');
        throw conflict(
          `incoming carrier ${carrier.carrier_id} carries ${numbers.length} number(s) (${named}${numbers.length > 5 ? ', ...' : ''}): move them to another carrier first`,
        );
      }
    },
  });
}
