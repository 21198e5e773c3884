import type { FastifyBaseLogger } from 'fastify';

/** A value a detail may carry: never a secret. */
export type AuditValue = string | number | boolean | null;

/** One change worth an audit line: who did what to which thing. */
export interface AuditEntry {
  /** The auth id of the account that made the request, or `operator`. */
  actor: string;
  /** `resource.verb`: `subaccount.create`, `endpoint.update`, `node.drain`... */
  action: string;
  /** The id of what was acted on. */
  target: string;
  /** The names of the fields the request set, never their values. */
  changed?: string[];
  /** A credential (auth token, password, access token...) was created, changed or removed. */
  credential?: boolean;
  /** What else identifies the change (a new status, a limit's value); no secret goes here. */
  detail?: Record<string, AuditValue>;
  /** When the change was made; now when not given. */
  at?: Date;
}

/**
 * Writes one audit line through the gateway's logger, at level info with the message `audit`:
 * `{"audit": true, "actor", "action", "target", "at", ...}`. Secrets are never given to it; a
 * credential change is recorded as `credential: true` and the names of the fields changed.
 */
export function audit(log: Pick<FastifyBaseLogger, 'info'>, entry: AuditEntry): void {
  const { at, changed, credential, detail, ...who } = entry;
  log.info(
    {
      audit: true,
      ...who,
      ...(changed ? { changed } : {}),
      ...(credential ? { credential: true } : {}),
      ...(detail ? { detail } : {}),
      at: (at ?? new Date()).toISOString(),
    },
    'audit',
  );
}

/**
 * The names of the fields a request body set, for `changed`: only those its schema knows (a
 * body may carry any other name, which is not the log's to keep).
 */
export function fieldsOf(body: unknown, schema: { properties?: object }): string[] {
  if (!body || typeof body !== 'object') return [];
  const given = body as Record<string, unknown>;
  return Object.keys(schema.properties ?? {}).filter((name) => given[name] !== undefined);
}
