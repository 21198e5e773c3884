// The page side of browser-phone.ts: sip.js 0.21 in Chromium, bundled by esbuild and driven
// from Node through page.evaluate on `window.phone`. Plain JavaScript, because the project's
// TypeScript is compiled for Node without the DOM library.
import { Inviter, Registerer, RegistererState, SessionState, UserAgent } from 'sip.js';

const state = {
  ua: null,
  token: null,
  registerer: null,
  /** The call in progress (an Inviter or an answered Invitation), or null. */
  session: null,
  /** Incoming INVITEs not yet answered, oldest first. */
  pending: [],
  /** Every state the current call went through, in order. */
  states: [],
  /** The SDP this page offered in its last INVITE. */
  offer: null,
  /** The remote track's audio graph, built once media flows. */
  analyser: null,
};

const bearer = (token) => [`Authorization: Bearer ${token}`];

/** The status line of a final response, as the Node side reports it. */
const final = (response) => ({
  status: response.message.statusCode,
  reason: response.message.reasonPhrase,
});

function follow(session) {
  state.session = session;
  state.states = [];
  state.analyser = null;
  session.stateChange.addListener((s) => state.states.push(s));
}

async function register(server, aor, token) {
  state.token = token;
  state.ua = new UserAgent({
    uri: UserAgent.makeURI(aor),
    transportOptions: { server },
    logBuiltinEnabled: false,
    // Without servers there is nothing to wait for but host candidates; sip.js's default
    // (a public STUN server) costs its whole gathering timeout on a machine without network.
    sessionDescriptionHandlerFactoryOptions: {
      peerConnectionConfiguration: { iceServers: [] },
      iceGatheringTimeout: 500,
    },
    delegate: { onInvite: (invitation) => state.pending.push(invitation) },
  });
  await state.ua.start();
  state.registerer = new Registerer(state.ua, { extraHeaders: bearer(token) });
  return new Promise((resolve) => {
    void state.registerer.register({
      requestDelegate: {
        onAccept: (response) => resolve({ ...final(response), registered: true }),
        onReject: (response) => resolve({ ...final(response), registered: false }),
      },
    });
  });
}

/**
 * Drops the WebSocket without unregistering (as a network change does), connects again and
 * registers again, as sip.js's reconnection does: the call in progress goes on. Resolves with
 * the new REGISTER's final response.
 */
async function reconnect() {
  await state.ua.transport.disconnect();
  await state.ua.reconnect();
  return new Promise((resolve) => {
    void state.registerer.register({
      requestDelegate: {
        onAccept: (response) => resolve({ ...final(response), registered: true }),
        onReject: (response) => resolve({ ...final(response), registered: false }),
      },
    });
  });
}

async function call(target, token) {
  const inviter = new Inviter(state.ua, UserAgent.makeURI(target), {
    extraHeaders: bearer(token ?? state.token),
  });
  follow(inviter);
  return new Promise((resolve, reject) => {
    const done = (response, answered) => {
      state.offer = inviter.request.body?.body ?? null;
      const answer = answered ? (response.message.body ?? null) : null;
      resolve({ ...final(response), answered, offer: state.offer, answer });
    };
    inviter
      .invite({
        requestDelegate: {
          onAccept: (response) => done(response, true),
          onReject: (response) => done(response, false),
        },
      })
      .catch(reject);
  });
}

/** Waits up to `timeoutMs` for an incoming INVITE and leaves it ringing: its offer. */
async function ringing(timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (state.pending.length === 0) {
    if (Date.now() > deadline) throw new Error('no incoming call is ringing');
    await new Promise((r) => setTimeout(r, 20));
  }
  return { offer: state.pending[0].body ?? null };
}

/** Accepts the oldest incoming INVITE, waiting up to `timeoutMs` for one. */
async function answer(timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (state.pending.length === 0) {
    if (Date.now() > deadline) throw new Error('no incoming call to answer');
    await new Promise((r) => setTimeout(r, 20));
  }
  const invitation = state.pending.shift();
  follow(invitation);
  await invitation.accept();
  return { from: invitation.remoteIdentity.uri.toString(), offer: invitation.body ?? null };
}

async function hangUp() {
  const session = state.session;
  if (session === null) return;
  if (session.state === SessionState.Established) await session.bye();
  else if (session.state === SessionState.Establishing && session instanceof Inviter) {
    await session.cancel();
  } else if (session.state === SessionState.Initial && !(session instanceof Inviter)) {
    await session.reject();
  }
}

/**
 * Re-INVITEs the established call with an ICE restart (RFC 8445 9), as an application does
 * when its network changed: the offer carries new ICE credentials. Resolves with the final
 * response, the offer sent and the answer.
 */
async function restartIce() {
  const session = state.session;
  if (session === null || session.state !== SessionState.Established) {
    throw new Error('no established call to restart ICE on');
  }
  return new Promise((resolve, reject) => {
    let offer = null;
    const done = (response, accepted) => {
      offer ??= session.sessionDescriptionHandler?.peerConnection?.localDescription?.sdp ?? null;
      resolve({ ...final(response), offer, answer: accepted ? response.message.body : null });
    };
    session
      .invite({
        sessionDescriptionHandlerOptions: { offerOptions: { iceRestart: true } },
        requestDelegate: {
          onAccept: (response) => done(response, true),
          onReject: (response) => done(response, false),
        },
      })
      .then((request) => {
        offer = request.message.body?.body ?? offer;
      })
      .catch(reject);
  });
}

/** The peer connection's ICE connection state (new, checking, connected, completed...). */
function iceState() {
  return state.session?.sessionDescriptionHandler?.peerConnection?.iceConnectionState ?? null;
}

/** RFC 4733 events through the browser's RTCDTMFSender, or one SIP INFO (application/dtmf-relay). */
async function sendDtmf(digit, via) {
  const session = state.session;
  if (session === null || session.state !== SessionState.Established) return false;
  if (via === 'info') {
    const content = `Signal=${digit}\r\nDuration=160`;
    const body = { contentDisposition: 'render', contentType: 'application/dtmf-relay', content };
    await session.info({ requestOptions: { body } });
    return true;
  }
  return session.sessionDescriptionHandler.sendDtmf(digit, { duration: 160 });
}

/**
 * An AnalyserNode on the remote track. Chromium pulls a remote WebRTC track into WebAudio only
 * while the stream also plays in a media element, so a muted <audio> keeps it flowing.
 */
function remoteAnalyser() {
  if (state.analyser !== null) return state.analyser;
  const stream = state.session?.sessionDescriptionHandler?.remoteMediaStream;
  if (!stream || stream.getAudioTracks().length === 0) throw new Error('no remote audio track');
  const element = new Audio();
  element.muted = true;
  element.srcObject = stream;
  void element.play();
  const context = new AudioContext();
  const node = context.createAnalyser();
  node.fftSize = 8192;
  node.smoothingTimeConstant = 0;
  context.createMediaStreamSource(stream).connect(node);
  state.analyser = { context, node, element };
  return state.analyser;
}

/**
 * Listens to the remote audio for `windowMs`: the frequency with the most energy summed over
 * the window, and the mean RMS level in dBFS (-Infinity for digital silence). A browser with
 * no audio output (headless Firefox: its AudioContext never runs) records the remote track
 * instead and reads the recording through an OfflineAudioContext, with the same analyser.
 */
async function listen(windowMs, probesHz = []) {
  const { context, node } = remoteAnalyser();
  await Promise.race([context.resume(), new Promise((r) => setTimeout(r, 1000))]);
  if (context.state !== 'running') return listenToRecording(windowMs);
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
 * `listen` without an audio output: the remote track recorded for `windowMs` (MediaRecorder)
 * and decoded by an OfflineAudioContext, handed to Node as 16-bit samples (base64) to analyse.
 */
async function listenToRecording(windowMs) {
  const stream = state.session?.sessionDescriptionHandler?.remoteMediaStream;
  if (!stream || stream.getAudioTracks().length === 0) throw new Error('no remote audio track');
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

async function stop() {
  await hangUp().catch(() => {});
  if (state.registerer?.state === RegistererState.Registered) {
    await state.registerer.unregister().catch(() => {});
  }
  await state.ua?.stop();
}

window.phone = {
  register,
  reconnect,
  call,
  ringing,
  answer,
  hangUp,
  sendDtmf,
  restartIce,
  iceState,
  listen,
  stop,
  states: () => [...state.states],
  pending: () => state.pending.length,
  ringingState: () => state.pending[0]?.state ?? null,
};
