// A worker thread that reads one socket through the datagram reader; told 'close', it gives the
// socket back and closes it, and then has nothing left to keep it alive.
import { createSocket } from 'node:dgram';
import { parentPort } from 'node:worker_threads';
import { readThroughReader } from '../../../../../src/media/net/datagram-reader.js';

const socket = createSocket('udp4');
socket.bind(0, '127.0.0.1', () => {
  const release = readThroughReader(socket, () => undefined);
  parentPort!.postMessage(release === null ? 'not taken' : 'reading');
  parentPort!.once('message', () => {
    release?.();
    socket.close();
    parentPort!.close();
  });
});
