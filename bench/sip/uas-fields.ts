/**
 * What a UAS (or a UAC matching a response) reads from every message it receives, before any
 * application logic: enough to find or create the transaction and the dialog. Each parser in the
 * benchmark must produce these from the raw bytes; that, not "split into headers", is what is
 * timed, so a parser that defers work until a header is read pays for it here.
 */
export interface UasFields {
  method: string | null;
  status: number | null;
  /** User and host of the request-URI: what a gateway routes an incoming call on. */
  requestUser: string | null;
  requestHost: string | null;
  topViaBranch: string;
  fromTag: string;
  toTag: string | null;
  callId: string;
  cseqSeq: number;
  cseqMethod: string;
  /** Of the body the parser delivers; the samples are ASCII, so characters and bytes agree. */
  bodyLength: number;
}

/**
 * A cheap number that depends on every field, summed over a timed run: it keeps the JIT from
 * dropping reads whose results are unused, and checks that every iteration, not just the first,
 * read the right values.
 */
export function fieldsDigest(f: UasFields): number {
  return (
    (f.method?.length ?? 0) +
    (f.status ?? 0) +
    (f.requestUser?.length ?? 0) +
    (f.requestHost?.length ?? 0) +
    f.topViaBranch.length +
    f.fromTag.length +
    (f.toTag?.length ?? 0) +
    f.callId.length +
    f.cseqSeq +
    f.cseqMethod.length +
    f.bodyLength
  );
}

/** The fields that differ from the expected ones, as `name: got … expected …` lines. */
export function fieldMismatches(got: UasFields, expected: UasFields): string[] {
  const wrong: string[] = [];
  for (const key of Object.keys(expected) as Array<keyof UasFields>) {
    if (got[key] !== expected[key]) {
      wrong.push(
        `${key}: got ${JSON.stringify(got[key])}, expected ${JSON.stringify(expected[key])}`,
      );
    }
  }
  return wrong;
}
