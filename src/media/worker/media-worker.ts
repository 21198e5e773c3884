import { parentPort, workerData } from 'node:worker_threads';
import { CommandOrder } from './command-order.js';
import { MessageBatch } from '../../core/message-batch.js';
import type { Reply, Request, WorkerMessage, WorkerSettings } from './protocol.js';
import { StreamFork } from '../../stream/stream-fork.js';
import { capSendBuffer } from '../net/send-buffer.js';
import { WorkerSessions } from './worker-sessions.js';

/** SO_SNDBUF of a stream's socket: about a second of a 24 kHz L16 stream's two tracks. */
const KERNEL_SEND_BUFFER_BYTES = 64 * 1024;

/**
 * The entry of a media worker thread: it owns its sessions, their RTP sockets and their
 * audio, and answers the main thread's commands, each with one reply of the same id (a quiet
 * one only if it fails). A
 * command may take its time (a play answers when the audio ends); others run meanwhile.
 * Commands come in batches; replies and events go out in batches, one per turn.
 */
const port = parentPort;
if (!port) throw new Error('media-worker runs inside a worker thread');
const outbox = new MessageBatch<WorkerMessage>((messages) => port.postMessage(messages));

const sessions: WorkerSessions = new WorkerSessions(
  workerData as WorkerSettings,
  (sessionId, event) => outbox.push({ kind: 'event', sessionId, event }),
  (ports) => outbox.push({ kind: 'ports', ports }),
  // This entry is the thread's composition root: the media plane hosts the stream forks.
  (spec, openAudio, report, onInboundLatency) =>
    new StreamFork(spec, openAudio, report, {
      onInboundLatency,
      sendBufferBytes: spec.sendBufferBytes,
      guard: sessions.guard,
      // What the kernel holds unsent stays small, so a slow server is seen in our own count.
      onSocket: (socket) => capSendBuffer(socket, KERNEL_SEND_BUFFER_BYTES),
    }),
  (latency) => outbox.push({ kind: 'latency', ...latency }),
);

const order = new CommandOrder((command) => sessions.handle(command));
port.on('message', (requests: Request[]) => {
  for (const request of requests) {
    order.handle(request).then(
      (result) => {
        if (!request.quiet)
          outbox.push({ kind: 'reply', id: request.id, ok: true, result } as Reply);
      },
      (error: Error) =>
        outbox.push(
          request.quiet
            ? {
                kind: 'failed',
                command: request.type,
                sessionId: request.sessionId,
                error: error.message,
              }
            : { kind: 'reply', id: request.id, ok: false, error: error.message },
        ),
    );
  }
});
