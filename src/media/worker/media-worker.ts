import { parentPort, workerData } from 'node:worker_threads';
import type { Reply, Request, WorkerSettings } from './protocol.js';
import { StreamFork } from '../../stream/stream-fork.js';
import { capSendBuffer } from '../net/send-buffer.js';

/** SO_SNDBUF of a stream's socket: about a second of a 24 kHz L16 stream's two tracks. */
const KERNEL_SEND_BUFFER_BYTES = 64 * 1024;
import { WorkerSessions } from './worker-sessions.js';

/**
 * The entry of a media worker thread: it owns its sessions, their RTP sockets and their
 * audio, and answers the main thread's commands, each with one reply of the same id. A
 * command may take its time (a play answers when the audio ends); others run meanwhile.
 */
const port = parentPort;
if (!port) throw new Error('media-worker runs inside a worker thread');

const sessions = new WorkerSessions(
  workerData as WorkerSettings,
  (sessionId, event) => port.postMessage({ kind: 'event', sessionId, event }),
  (ports) => port.postMessage({ kind: 'ports', ports }),
  // This entry is the thread's composition root: the media plane hosts the stream forks.
  (spec, openAudio, report, onInboundLatency) =>
    new StreamFork(spec, openAudio, report, {
      onInboundLatency,
      sendBufferBytes: spec.sendBufferBytes,
      // What the kernel holds unsent stays small, so a slow server is seen in our own count.
      onSocket: (socket) => capSendBuffer(socket, KERNEL_SEND_BUFFER_BYTES),
    }),
  (latency) => port.postMessage({ kind: 'latency', ...latency }),
);

port.on('message', (request: Request) => {
  sessions.handle(request).then(
    (result) => port.postMessage({ kind: 'reply', id: request.id, ok: true, result } as Reply),
    (error: Error) =>
      port.postMessage({ kind: 'reply', id: request.id, ok: false, error: error.message } as Reply),
  );
});
