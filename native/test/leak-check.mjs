// Exercises every entry point of the addon many times, dropping each object, so that valgrind
// (npm run native:leak-check) sees any allocation the addon fails to free. Run plainly, it
// just has to finish.
import { createSocket } from 'node:dgram';
import { createRequire } from 'node:module';

const addon = createRequire(import.meta.url)('../build/Release/voxgate_native.node');
const ROUNDS = Number(process.env.LEAK_CHECK_ROUNDS ?? 200);

const frame = Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin(i / 3)));
for (let round = 0; round < ROUNDS; round++) {
  addon.muLawDecode(addon.muLawEncode(frame));
  addon.aLawDecode(addon.aLawEncode(frame));
  addon.l16FromNetwork(addon.l16ToNetwork(frame));
  addon.mix([frame, frame, frame]);
  addon.gain(frame, 0.5);
  addon.energyDbfs(frame);
  for (const [from, to] of [
    [8000, 16000],
    [16000, 8000],
    [22050, 24000],
  ]) {
    const resampler = new addon.Resampler(from, to, 3);
    resampler.process(frame);
    resampler.process(frame.subarray(0, 77));
    resampler.inputLatency();
  }
  for (const rate of [8000, 16000, 24000]) {
    const suppressor = new addon.NoiseSuppressor(rate, round % 4);
    const tenMs = new Int16Array(rate / 100).fill(100);
    suppressor.process(tenMs);
    suppressor.process(tenMs);
  }
  for (const rate of [8000, 16000, 48000]) {
    const encoder = new addon.OpusEncoder(rate, 24000, true, 10, round % 2 === 0, 5);
    const decoder = new addon.OpusDecoder(rate);
    const twentyMs = Int16Array.from({ length: rate / 50 }, (_, i) => (i % 40) * 200);
    const packet = encoder.encode(twentyMs);
    encoder.setBitrate(12000);
    encoder.setPacketLoss(5);
    decoder.decode(packet, 0, false);
    decoder.decode(encoder.encode(twentyMs), rate / 50, true);
    decoder.decode(null, rate / 50, false);
    decoder.decode(Buffer.from([0xff, 0xff, 0xff]), 0, false);
    addon.opusPacketSamples(packet, 48000);
    addon.opusErrorText(-4);
  }
  // Let the garbage collector finalise the native objects dropped this round.
  if (round % 50 === 49 && globalThis.gc) globalThis.gc();
}
// The datagram reader: sockets added, read, removed; readers made and dropped.
const stateOf = (socket) =>
  socket[Object.getOwnPropertySymbols(socket).find((s) => s.description === 'state symbol')];
const sender = createSocket('udp4');
await new Promise((resolve) => sender.bind(0, '127.0.0.1', resolve));
for (let round = 0; round < Math.ceil(ROUNDS / 20); round++) {
  let received = 0;
  const reader = new addon.DatagramReader((bytes, meta, count) => (received += count));
  const sockets = [];
  for (let i = 0; i < 4; i++) {
    const socket = createSocket('udp4');
    await new Promise((resolve) => socket.bind(0, '127.0.0.1', resolve));
    stateOf(socket).handle.recvStop();
    reader.add(stateOf(socket).handle.fd, i + 1);
    sockets.push(socket);
  }
  for (const socket of sockets) {
    sender.send(Buffer.alloc(172), socket.address().port, '127.0.0.1');
    sender.send(Buffer.alloc(3000), socket.address().port, '127.0.0.1');
  }
  while (received < sockets.length) await new Promise((resolve) => setTimeout(resolve, 5));
  for (const socket of sockets) {
    reader.remove(stateOf(socket).handle.fd);
    await new Promise((resolve) => socket.close(resolve));
  }
  if (round % 2 === 0) reader.close();
}
sender.close();
if (globalThis.gc) globalThis.gc();
console.log(`leak-check: ${ROUNDS} rounds done`);
