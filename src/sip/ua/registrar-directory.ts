import type { DigestSecret } from '../auth/digest-authenticator.js';
import type { TransportProtocol } from '../transport/flow.js';

/** Whose bindings a REGISTER changes: an endpoint (digest), or a token's subject (bearer). */
export interface AddressOfRecord {
  kind: 'endpoint' | 'token';
  /** The tenant (main account) the bindings are stored under. */
  account: string;
  subaccount: string | null;
  /** The endpoint id, or the token's `sub`. */
  id: string;
  /** The user part of the AOR (the endpoint username, or the token's `sub`). */
  user: string;
  /**
   * Epoch ms past which the credentials that proved it are no longer valid (a token's exp):
   * no binding they make outlives them. Endpoints' passwords do not expire.
   */
  notAfter?: number;
  /** The application a token names (its `app` claim): the one its client's calls run. */
  app?: string;
}

/** An endpoint as the registrar needs it: who owns it and its HA1 values. */
export interface RegistrarUser extends DigestSecret {
  aor: AddressOfRecord;
}

/** One Contact bound to an AOR (RFC 3261 10.3), with the flow it was registered over. */
export interface Binding {
  /** The Contact URI as the client wrote it. */
  contact: string;
  /** ms since the epoch. */
  expiresAt: number;
  callId: string;
  cseq: number;
  userAgent: string | null;
  /**
   * The Path values of the REGISTER (RFC 3327), in order: the proxies between us and the
   * client, the first the nearest to us. Requests to the contact go through them as a
   * pre-loaded route set. Empty when the client registered directly.
   */
  path: string[];
  /** How to reach the client: the flow the REGISTER came on (NAT-friendly, RFC 5626 style). */
  flow: {
    protocol: TransportProtocol;
    address: string;
    port: number;
    connectionId: string | null;
    /** The node that holds the connection, for connection-oriented flows. */
    node: string;
  };
}

/** Where the registrar finds users and keeps bindings: the state layer, shared by nodes. */
export interface RegistrarDirectory {
  findUser(username: string): Promise<RegistrarUser | null>;
  /** The auth token of a main account or subaccount, to check a bearer token's signature. */
  tokenKey(authId: string): Promise<string | null>;
  /** An account id's owner: the tenant and the subaccount (null for a main account). */
  accountOf(authId: string): Promise<{ account: string; subaccount: string | null } | null>;
  load(aor: AddressOfRecord): Promise<Binding[]>;
  /**
   * Reads the AOR's bindings, lets `change` compute the new list (null: leave them as they
   * are) and stores it, an empty list unregistering the AOR. Resolves to the list now held.
   */
  update(
    aor: AddressOfRecord,
    change: (current: Binding[]) => Binding[] | null,
  ): Promise<Binding[]>;
}
