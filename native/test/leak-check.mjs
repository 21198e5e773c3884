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
    const encoder = new addon.OpusEncoder(
      rate,
      24000,
      true,
      10,
      round % 2 === 0,
      5,
      round % 3 === 0,
    );
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
  // SRTP: each suite's contexts made, used both ways (refusals included) and dropped.
  for (const [suite, saltLength, tag] of [
    [0, 14, 10],
    [1, 14, 4],
    [2, 12, 16],
  ]) {
    const key = Buffer.alloc(16, round);
    const salt = Buffer.alloc(saltLength, 7);
    const sender = new addon.SrtpContext(suite, key, salt, true);
    const receiver = new addon.SrtpContext(suite, key, salt, true);
    const packet = Buffer.alloc(172 + tag);
    packet[0] = 0x80;
    packet.writeUInt16BE(round, 2);
    packet.writeUInt32BE(0x1234 + (round % 40), 8);
    const length = sender.protectRtp(packet, 172);
    receiver.unprotectRtp(packet.subarray(0, length));
    receiver.unprotectRtp(packet.subarray(0, length));
    receiver.unprotectRtp(packet.subarray(0, 5));
    const report = Buffer.alloc(28 + 4 + tag + 6);
    report[0] = 0x80;
    report[1] = 200;
    const rtcpLength = sender.protectRtcp(report, 28);
    receiver.unprotectRtcp(report.subarray(0, rtcpLength));
    report[20] ^= 1;
    receiver.unprotectRtcp(report.subarray(0, rtcpLength));
    addon.deriveSrtpKey(key, salt, round % 6, 30);
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

// DTLS: certificates made, contexts and endpoints made and dropped; handshakes completed,
// failed on a fingerprint mismatch, and abandoned half-way, some freed, some left to the GC.
const hex = (fingerprint) => Buffer.from(fingerprint.replace(/:/g, ''), 'hex');
const { X509Certificate } = await import('node:crypto');
const PROFILES = 'SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80';
const CIPHERS = 'ECDHE-ECDSA-AES128-GCM-SHA256';
function dtlsPair(a, b, contextA, contextB, wrongFingerprint) {
  const digestA = hex(new X509Certificate(a.cert).fingerprint256);
  const digestB = wrongFingerprint
    ? Buffer.alloc(32)
    : hex(new X509Certificate(b.cert).fingerprint256);
  const client = new addon.DtlsEndpoint(contextA, false, 1200, 1000, 'SHA256', [digestB]);
  const server = new addon.DtlsEndpoint(contextB, true, 1200, 1000, 'SHA256', [digestA]);
  return { client, server };
}
function run(client, server, flights) {
  let toServer = client.start();
  let toClient = [];
  for (let i = 0; i < flights && (toServer.length || toClient.length); i++) {
    const next = [];
    for (const d of toServer) next.push(...server.feed(d));
    toServer = [];
    for (const d of toClient) toServer.push(...client.feed(d));
    toClient = next;
  }
}
for (let round = 0; round < Math.ceil(ROUNDS / 10); round++) {
  const a = addon.generateDtlsCertificate('voxgate', 30);
  const b = addon.generateDtlsCertificate('peer', 30);
  const contextA = new addon.DtlsContext(a.cert, a.key, CIPHERS, PROFILES);
  const contextB = new addon.DtlsContext(b.cert, b.key, CIPHERS, PROFILES);
  const done = dtlsPair(a, b, contextA, contextB, false);
  run(done.client, done.server, 10);
  done.client.exportKeyingMaterial('EXTRACTOR-dtls_srtp', 56);
  done.server.srtpProfile();
  for (const d of done.client.close()) done.server.feed(d);
  done.client.free();
  const refused = dtlsPair(a, b, contextA, contextB, true);
  run(refused.client, refused.server, 10);
  refused.client.reason();
  refused.server.free();
  const abandoned = dtlsPair(a, b, contextA, contextB, false);
  run(abandoned.client, abandoned.server, 1);
  abandoned.client.timeoutMs();
  abandoned.client.handleTimeout();
  abandoned.server.feed(Buffer.from([22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 1]));
  try {
    new addon.DtlsContext(a.cert, b.key, CIPHERS, PROFILES);
  } catch {
    // A key of another certificate: refused, and nothing kept.
  }
  if (round % 5 === 4 && globalThis.gc) globalThis.gc();
}
if (globalThis.gc) globalThis.gc();
console.log(`leak-check: ${ROUNDS} rounds done`);
