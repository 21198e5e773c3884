/**
 * RFC 3261 17 timer values (Table 4 of RFC 3261 Appendix A, with RFC 6026's Timers L and M).
 * T1, T2 and T4 are configurable; every other timer derives from them.
 */
export interface TimerSettings {
  /** RTT estimate, default 500 ms. */
  t1: number;
  /** Maximum retransmit interval for non-INVITE requests and INVITE responses, default 4 s. */
  t2: number;
  /** Maximum duration a message remains in the network, default 5 s. */
  t4: number;
}

export const DEFAULT_TIMERS: TimerSettings = { t1: 500, t2: 4000, t4: 5000 };

/** Tables already made, for each settings object: unreliable first, then reliable. */
const tables = new WeakMap<TimerSettings, [TimerTable | null, TimerTable | null]>();

/**
 * The named timers, for a transport that is reliable (TCP, WS) or not (UDP). One table per
 * settings and kind of transport, shared by every transaction that uses it.
 */
export function timerTable(s: TimerSettings, reliable: boolean): TimerTable {
  let made = tables.get(s);
  if (!made) tables.set(s, (made = [null, null]));
  return (made[reliable ? 1 : 0] ??= Object.freeze(makeTable(s, reliable)));
}

function makeTable(s: TimerSettings, reliable: boolean) {
  return {
    /** INVITE request retransmit, UDP only: starts at T1 and doubles. */
    A: s.t1,
    /** INVITE transaction timeout. */
    B: 64 * s.t1,
    /** Wait time for response retransmits (client INVITE, Completed). */
    D: reliable ? 0 : Math.max(32_000, 64 * s.t1),
    /** Non-INVITE request retransmit, UDP only: T1, doubling up to T2. */
    E: s.t1,
    /** Non-INVITE transaction timeout. */
    F: 64 * s.t1,
    /** INVITE response retransmit, UDP only: T1, doubling up to T2. */
    G: s.t1,
    /** Wait time for ACK receipt. */
    H: 64 * s.t1,
    /** Wait time for ACK retransmits. */
    I: reliable ? 0 : s.t4,
    /** Wait time for non-INVITE request retransmits. */
    J: reliable ? 0 : 64 * s.t1,
    /** Wait time for response retransmits (client non-INVITE, Completed). */
    K: reliable ? 0 : s.t4,
    /** RFC 6026: server INVITE Accepted, absorbing INVITE retransmissions after a 2xx. */
    L: 64 * s.t1,
    /** RFC 6026: client INVITE Accepted, passing 2xx retransmissions to the TU. */
    M: 64 * s.t1,
  };
}

export type TimerTable = Readonly<ReturnType<typeof makeTable>>;
