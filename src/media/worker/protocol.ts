/**
 * The typed protocol between the main thread and a media worker (DESIGN.md: commands down,
 * events up). Every command carries a request id; the worker answers each with one reply of
 * the same id. Events are unsolicited and name the session they concern.
 */

export interface CreateSession {
  type: 'createSession';
  sessionId: string;
}

export interface DestroySession {
  type: 'destroySession';
  sessionId: string;
}

export interface Stats {
  type: 'stats';
}

export type Command = CreateSession | DestroySession | Stats;

/** What each command resolves to. */
export interface Results {
  createSession: { sessionId: string };
  destroySession: { sessionId: string; existed: boolean };
  stats: { sessions: number; heapUsed: number };
}

export type Request = Command & { id: number };

export type Reply =
  | { kind: 'reply'; id: number; ok: true; result: Results[Command['type']] }
  | { kind: 'reply'; id: number; ok: false; error: string };

/** Events a session raises (more kinds arrive with RTP, DTMF and streams). */
export type SessionEvent = { type: 'ended'; cause: string };

export type WorkerEvent = { kind: 'event'; sessionId: string; event: SessionEvent };

export type WorkerMessage = Reply | WorkerEvent;
