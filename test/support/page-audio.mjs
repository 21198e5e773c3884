// The page side of listening to a call's remote audio, shared by the browser phones' pages
// (sip.js and JsSIP): plain JavaScript for the browser, bundled with each page by esbuild.

/** The analyser of each remote stream, built the first time it is listened to. */
const analysers = new WeakMap();

/**
 * An AnalyserNode on a remote stream. Chromium pulls a remote WebRTC track into WebAudio only
 * while the stream also plays in a media element, so a muted <audio> keeps it flowing.
 */
function analyserOf(stream) {
  const known = analysers.get(stream);
  if (known) return known;
  const element = new Audio();
  element.muted = true;
  element.srcObject = stream;
  void element.play();
  const context = new AudioContext();
  const node = context.createAnalyser();
  node.fftSize = 8192;
  node.smoothingTimeConstant = 0;
  context.createMediaStreamSource(stream).connect(node);
  const analyser = { context, node, element };
  analysers.set(stream, analyser);
  return analyser;
}

/**
 * Listens to a remote stream for `windowMs`: the frequency with the most energy summed over
 * the window, the mean RMS level in dBFS (-Infinity for digital silence), and the energy at
 * each of `probesHz`. A browser with no audio output (headless Firefox: its AudioContext never
 * runs) records the stream instead, for Node to analyse (see listenToRecording).
 */
export async function listenTo(stream, windowMs, probesHz = []) {
  if (!stream || stream.getAudioTracks().length === 0) throw new Error('no remote audio track');
  const { context, node } = analyserOf(stream);
  await Promise.race([context.resume(), new Promise((r) => setTimeout(r, 1000))]);
  if (context.state !== 'running') return listenToRecording(stream, windowMs);
  const spectrum = new Float32Array(node.frequencyBinCount);
  const energy = new Float64Array(node.frequencyBinCount);
  const samples = new Float32Array(node.fftSize);
  let squares = 0;
  let count = 0;
  const end = performance.now() + windowMs;
  while (performance.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    node.getFloatFrequencyData(spectrum);
    for (let i = 0; i < spectrum.length; i++) energy[i] += 10 ** (spectrum[i] / 10);
    node.getFloatTimeDomainData(samples);
    for (const s of samples) squares += s * s;
    count += samples.length;
  }
  return heard(energy, squares, count, context.sampleRate, node.fftSize, probesHz);
}

/**
 * What a window of listening found: the strongest bin, the level, and for each probe frequency
 * the energy of its strongest bin within two of it, in dB under the strongest bin of all.
 */
function heard(energy, squares, count, sampleRate, fftSize, probesHz) {
  let peak = 1;
  for (let i = 2; i < energy.length; i++) if (energy[i] > energy[peak]) peak = i;
  const rms = Math.sqrt(squares / Math.max(count, 1));
  const probes = {};
  for (const hz of probesHz) {
    const bin = Math.round((hz * fftSize) / sampleRate);
    const near = energy.slice(Math.max(bin - 2, 0), bin + 3);
    probes[hz] = 10 * Math.log10(Math.max(...near) / energy[peak]);
  }
  return {
    dominantHz: (peak * sampleRate) / fftSize,
    levelDbfs: rms === 0 ? -Infinity : 20 * Math.log10(rms),
    sampleRate,
    probes,
  };
}

/**
 * `listenTo` without an audio output: the stream recorded for `windowMs` (MediaRecorder)
 * and decoded by an OfflineAudioContext, handed to Node as 16-bit samples (base64) to analyse.
 */
async function listenToRecording(stream, windowMs) {
  const recorder = new MediaRecorder(stream);
  const parts = [];
  recorder.ondataavailable = (event) => parts.push(event.data);
  const stopped = new Promise((r) => (recorder.onstop = r));
  recorder.start();
  await new Promise((r) => setTimeout(r, windowMs));
  recorder.stop();
  await stopped;
  const bytes = await new Blob(parts).arrayBuffer();
  const decoded = await new OfflineAudioContext(1, 128, 48_000).decodeAudioData(bytes);
  const samples = decoded.getChannelData(0);
  const pcm = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    pcm[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32768)));
  }
  let text = '';
  const view = new Uint8Array(pcm.buffer);
  for (let i = 0; i < view.length; i += 0x8000) {
    text += String.fromCharCode(...view.subarray(i, i + 0x8000));
  }
  return { recorded: btoa(text), sampleRate: decoded.sampleRate };
}
