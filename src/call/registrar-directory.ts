import { setTimeout as sleep } from 'node:timers/promises';
import { KeyedTurns } from '../core/keyed-turns.js';
import type {
  AddressOfRecord,
  Binding,
  RegistrarDirectory,
  RegistrarUser,
} from '../sip/ua/registrar-directory.js';
import type { BindingRecord, RegistrationRecord } from '../state/records.js';
import { heldByConnection, type State } from '../state/state.js';

/**
 * How many times one change of a registration is tried against other nodes' writes that keep
 * coming in between its read and its write, before it fails (the REGISTER then gets a 500).
 * Between tries it waits a random moment of up to a millisecond per try so far: two nodes each
 * with a queue of changes for one registration otherwise go in lockstep, and one can lose every
 * round (twenty devices registering at once on two nodes lost eight rounds in a row).
 */
const MAX_REWRITES = 32;

/** The registrar's view of the state layer: endpoints, accounts and registrations. */
export class StateRegistrarDirectory implements RegistrarDirectory {
  /** This node's changes to one registration (tenant/key), in turn. */
  private readonly turns = new KeyedTurns();

  constructor(
    private readonly state: State,
    private readonly now: () => number,
  ) {}

  async findUser(username: string): Promise<RegistrarUser | null> {
    const endpoint = await this.state.endpoints.findByUnique({
      space: 'sip_user',
      value: username,
    });
    if (!endpoint) return null;
    return {
      aor: {
        kind: 'endpoint',
        account: endpoint.account,
        subaccount: endpoint.subaccount,
        id: endpoint.endpoint_id,
        user: endpoint.username,
      },
      ha1: (algorithm) => (algorithm === 'MD5' ? endpoint.ha1_md5 : endpoint.ha1_sha256),
    };
  }

  async tokenKey(authId: string): Promise<string | null> {
    const account = await this.state.accounts.findByUnique({ space: 'auth_id', value: authId });
    return account?.enabled ? account.auth_token : null;
  }

  async accountOf(authId: string): Promise<{ account: string; subaccount: string | null } | null> {
    const account = await this.state.accounts.findByUnique({ space: 'auth_id', value: authId });
    if (!account) return null;
    return { account: account.account, subaccount: account.subaccount };
  }

  async load(aor: AddressOfRecord): Promise<Binding[]> {
    const record = await this.state.registrations.get(aor.account, aorKey(aor));
    return record ? record.bindings.map(fromRecord) : [];
  }

  update(
    aor: Pick<AddressOfRecord, 'kind' | 'id' | 'account' | 'subaccount'>,
    change: (current: Binding[]) => Binding[] | null,
  ): Promise<Binding[]> {
    return this.rewrite(aorKey(aor), aor, change);
  }

  /**
   * update() of the registration stored under `key`. The changes this node makes to one
   * registration run one after the other; each is a compare-and-set against the other nodes':
   * when another write (a REGISTER on another node, a closed connection's bindings going there)
   * came between the read and the write, it reads again and applies `change` to what is there
   * now, so that neither write loses the other's bindings. `change` may run more than once.
   */
  private rewrite(
    key: string,
    aor: { account: string; subaccount: string | null },
    change: (current: Binding[]) => Binding[] | null,
  ): Promise<Binding[]> {
    return this.turns.run(`${aor.account}/${key}`, () => this.swapIn(key, aor, change));
  }

  private async swapIn(
    key: string,
    aor: { account: string; subaccount: string | null },
    change: (current: Binding[]) => Binding[] | null,
  ): Promise<Binding[]> {
    for (let attempt = 1; ; attempt++) {
      const previous = await this.state.registrations.get(aor.account, key);
      const current = previous ? previous.bindings.map(fromRecord) : [];
      const bindings = change(current);
      if (bindings === null) return current;
      const next: RegistrationRecord | null =
        bindings.length === 0
          ? null
          : {
              account: aor.account,
              subaccount: aor.subaccount,
              created: previous?.created ?? this.now(),
              aor: key,
              bindings: bindings.map(toRecord),
            };
      if (await this.state.registrations.swap(previous, next)) return bindings;
      if (attempt === MAX_REWRITES) {
        throw new Error(
          `the registration of ${key} changed under ${MAX_REWRITES} writes in a row; not stored`,
        );
      }
      await sleep(Math.random() * attempt);
    }
  }

  /**
   * Removes the bindings that only `node`'s connections reached, once that node is dead: their
   * contacts cannot be reached any more (RFC 5626 5.2 treats a failed flow so), and their
   * clients register again over a connection to a live node. UDP bindings and bindings through
   * a Path stay. Resolves to how many bindings went.
   */
  async unbindNode(tenant: string, node: string): Promise<number> {
    let removed = 0;
    for (const record of await this.state.registrations.all(tenant, `node:${node}`)) {
      let gone = 0;
      // By the key it is stored under, whatever its format (see aorKey).
      await this.rewrite(record.aor, record, (bindings) => {
        const kept = bindings.filter(
          (b) => !(b.flow.node === node && heldByConnection(toRecord(b))),
        );
        gone = bindings.length - kept.length;
        return gone === 0 ? null : kept;
      });
      removed += gone;
    }
    return removed;
  }
}

/** The registration key of an endpoint's AOR. */
export const endpointAorKey = (endpointId: string): string => `endpoint:${endpointId}`;

/**
 * The registration key of an access token's subject: `token:<owner>:<sub>`, the owner being the
 * subaccount or main account whose token registered it. Any account may mint a token for any
 * `sub`, so the subject alone would let two tenants' clients overwrite each other's bindings
 * and be reached by each other's calls. Registrations stored under the older `token:<sub>` are
 * not read any more and not migrated: they expire within VOXGATE_SIP_MAX_EXPIRES (and then go
 * with the sweep of expired records), and their clients' next REGISTER stores them under the
 * new key.
 */
export const tokenAorKey = (
  owner: { account: string; subaccount: string | null },
  sub: string,
): string => `token:${owner.subaccount ?? owner.account}:${sub}`;

/** The registration key of an AOR: endpointAorKey or tokenAorKey. */
export const aorKey = (
  aor: Pick<AddressOfRecord, 'kind' | 'id' | 'account' | 'subaccount'>,
): string => (aor.kind === 'endpoint' ? endpointAorKey(aor.id) : tokenAorKey(aor, aor.id));

/** The bindings of an endpoint that have not expired, the last made or refreshed last. */
export async function liveBindings(
  state: State,
  account: string,
  endpointId: string,
  now: number,
): Promise<BindingRecord[]> {
  const record = await state.registrations.get(account, endpointAorKey(endpointId));
  return (record?.bindings ?? []).filter((b) => b.expires_at > now);
}

/**
 * The live bindings of an access token's subject (a browser or SDK client) registered with a
 * token of `owner` itself: a subaccount's calls reach its own clients, not its siblings' nor
 * the main account's.
 */
export async function liveTokenBindings(
  state: State,
  owner: { account: string; subaccount: string | null },
  sub: string,
  now: number,
): Promise<BindingRecord[]> {
  const record = await state.registrations.get(owner.account, tokenAorKey(owner, sub));
  // The key names the owner; the check keeps a record written otherwise from being used.
  if (!record || record.subaccount !== owner.subaccount) return [];
  return record.bindings.filter((b) => b.expires_at > now);
}

const toRecord = (b: Binding): BindingRecord => ({
  contact: b.contact,
  expires_at: b.expiresAt,
  call_id: b.callId,
  cseq: b.cseq,
  user_agent: b.userAgent,
  protocol: b.flow.protocol,
  address: b.flow.address,
  port: b.flow.port,
  connection_id: b.flow.connectionId,
  node: b.flow.node,
  path: b.path,
});

const fromRecord = (r: BindingRecord): Binding => ({
  contact: r.contact,
  expiresAt: r.expires_at,
  callId: r.call_id,
  cseq: r.cseq,
  userAgent: r.user_agent,
  path: r.path ?? [],
  flow: {
    protocol: r.protocol as Binding['flow']['protocol'],
    address: r.address,
    port: r.port,
    connectionId: r.connection_id,
    node: r.node,
  },
});

/**
 * Tidies the tenant's stored registrations: removes those none of whose bindings is live at
 * `now`, and rewrites those holding expired bindings beside live ones without them. The node
 * that made a binding removes it when it expires, but a node that stopped meanwhile never
 * does, and registrations stored under a key no longer read (an older format) would stay for
 * good. Each write is a compare-and-set: one that a REGISTER changed meanwhile is left for the
 * next sweep. Reads a page of `pageSize` at a time; resolves with how many bindings went.
 */
export async function removeExpiredRegistrations(
  state: State,
  tenant: string,
  now: number,
  pageSize = 500,
): Promise<number> {
  let removed = 0;
  for (let offset = 0; ;) {
    const { items } = await state.registrations.page(tenant, {
      offset,
      limit: pageSize,
      ascending: true,
    });
    let gone = 0;
    for (const record of items) {
      const live = record.bindings.filter((binding) => binding.expires_at > now);
      if (live.length === record.bindings.length) continue;
      const next = live.length === 0 ? null : { ...record, bindings: live };
      if (!(await state.registrations.swap(record, next))) continue;
      removed += record.bindings.length - live.length;
      if (next === null) gone++;
    }
    if (items.length < pageSize) return removed;
    offset += items.length - gone;
  }
}
