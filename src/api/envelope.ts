import type { FastifyRequest } from 'fastify';

/** Builds resource URIs and list envelopes; VOXGATE_PUBLIC_URL, when set, is put before paths. */
export class UriBuilder {
  constructor(private readonly base: string) {}

  /** `/v1/Account/{auth_id}/` + the parts, each followed by a slash. */
  account(authId: string, ...parts: string[]): string {
    return `${this.base}/v1/Account/${authId}/${parts.map((p) => `${encodeURIComponent(p)}/`).join('')}`;
  }

  /** `/v1/` + the parts, each followed by a slash: paths outside any account. */
  service(...parts: string[]): string {
    return `${this.base}/v1/${parts.map((p) => `${encodeURIComponent(p)}/`).join('')}`;
  }

  list<T>(
    request: FastifyRequest,
    page: { limit: number; offset: number; total: number },
    objects: T[],
  ): ListEnvelope<T> {
    const { limit, offset, total } = page;
    const link = (at: number) => {
      const url = new URL(request.url, 'http://x');
      url.searchParams.set('limit', String(limit));
      url.searchParams.set('offset', String(at));
      return `${this.base}${url.pathname}${url.search}`;
    };
    return {
      api_id: request.id,
      meta: {
        limit,
        offset,
        total_count: total,
        next: offset + limit < total ? link(offset + limit) : null,
        previous: offset > 0 ? link(Math.max(0, offset - limit)) : null,
      },
      objects,
    };
  }
}

export interface ListEnvelope<T> {
  api_id: string;
  meta: {
    limit: number;
    offset: number;
    total_count: number;
    next: string | null;
    previous: string | null;
  };
  objects: T[];
}
