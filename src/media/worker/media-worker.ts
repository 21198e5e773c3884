import { parentPort } from 'node:worker_threads';
import type { Command, Reply, Request, Results } from './protocol.js';

/**
 * The entry of a media worker thread: it owns its sessions and answers the main thread's
 * commands. Sessions hold nothing yet but their id; RTP, jitter buffers and the audio
 * pipeline attach to them as the media plane grows.
 */
const sessions = new Map<string, { created: number }>();

function handle(command: Command): Results[Command['type']] {
  switch (command.type) {
    case 'createSession':
      if (sessions.has(command.sessionId)) {
        throw new Error(`session ${command.sessionId} already exists on this worker`);
      }
      sessions.set(command.sessionId, { created: Date.now() });
      return { sessionId: command.sessionId };
    case 'destroySession':
      return { sessionId: command.sessionId, existed: sessions.delete(command.sessionId) };
    case 'stats':
      return { sessions: sessions.size, heapUsed: process.memoryUsage().heapUsed };
  }
}

const port = parentPort;
if (!port) throw new Error('media-worker runs inside a worker thread');
port.on('message', (request: Request) => {
  let reply: Reply;
  try {
    reply = { kind: 'reply', id: request.id, ok: true, result: handle(request) };
  } catch (error) {
    reply = { kind: 'reply', id: request.id, ok: false, error: (error as Error).message };
  }
  port.postMessage(reply);
});
