// The page side of browser-phone.ts for JsSIP: JsSIP 3 in the browser, bundled by esbuild and
// driven from Node through page.evaluate on `window.phone`, with the methods and results of
// the sip.js page (browser-phone-page.mjs) that the tests use. JsSIP's own behaviour is kept:
// it sends the token as it is configured to (`authorization_jwt`), offers session timers,
// and sends DTMF as SIP INFO unless asked for RFC 4733. Its session events are reported as
// sip.js's SessionState names (Establishing, Established, Terminated), so one harness reads
// both.
import JsSIP from 'jssip';
import { listenTo } from './page-audio.mjs';

const state = {
  ua: null,
  /** The call in progress, or null. */
  session: null,
  /** Incoming calls not yet answered, oldest first, each with the offer of its INVITE. */
  pending: [],
  /** Every state the current call went through, in order. */
  states: [],
  /** The remote stream of the current call, once its track arrived. */
  remote: null,
};

/** No STUN server: host candidates only, gathered at once on a machine without a network. */
const PC_CONFIG = { iceServers: [] };

function follow(session) {
  state.session = session;
  state.states = ['Establishing'];
  state.remote = null;
  session.on('confirmed', () => state.states.push('Established'));
  session.on('ended', () => state.states.push('Terminated'));
  session.on('failed', () => state.states.push('Terminated'));
  const watch = (connection) => {
    connection.addEventListener('track', (event) => {
      state.remote = event.streams[0] ?? new MediaStream([event.track]);
    });
  };
  if (session.connection) watch(session.connection);
  else session.on('peerconnection', (event) => watch(event.peerconnection));
}

/** Registers `aor` with an access token (`Authorization: Bearer`). */
function register(server, aor, token) {
  return start({ uri: aor, authorization_jwt: `Bearer ${token}` }, server);
}

/** Registers `aor` as an endpoint: its user name and password, answering digest challenges. */
function registerDigest(server, aor, user, password) {
  return start({ uri: aor, authorization_user: user, password }, server);
}

/**
 * Registers again: JsSIP tells of a REGISTER's answer only when its state changes, so it
 * unregisters first. The final response of the new REGISTER.
 */
async function registerAgain() {
  const gone = new Promise((resolve) => state.ua.once('unregistered', resolve));
  state.ua.unregister();
  await gone;
  const outcome = nextRegistration();
  state.ua.register();
  return outcome;
}

function start(identity, server) {
  state.ua = new JsSIP.UA({
    sockets: [new JsSIP.WebSocketInterface(server)],
    ...identity,
    // Registers once its WebSocket is up, as JsSIP applications do.
    register: true,
  });
  state.ua.on('newRTCSession', (event) => {
    if (event.originator === 'remote') {
      state.pending.push({ session: event.session, offer: event.request.body ?? null });
    }
  });
  const outcome = nextRegistration();
  state.ua.start();
  return outcome;
}

/** The final response of the UA's next REGISTER. */
function nextRegistration() {
  return new Promise((resolve) => {
    state.ua.once('registered', (event) =>
      resolve({
        status: event.response.status_code,
        reason: event.response.reason_phrase,
        registered: true,
      }),
    );
    state.ua.once('registrationFailed', (event) =>
      resolve({
        status: event.response?.status_code ?? 0,
        reason: event.response?.reason_phrase ?? event.cause,
        registered: false,
      }),
    );
  });
}

function call(target) {
  return new Promise((resolve) => {
    let offer = null;
    const session = state.ua.call(target, {
      mediaConstraints: { audio: true, video: false },
      pcConfig: PC_CONFIG,
      eventHandlers: {
        sending: (event) => {
          offer = event.request.body ?? null;
        },
        accepted: (event) =>
          resolve({
            status: event.response.status_code,
            reason: event.response.reason_phrase,
            answered: true,
            offer,
            answer: event.response.body ?? null,
          }),
        failed: (event) =>
          resolve({
            status: event.message?.status_code ?? 0,
            reason: event.message?.reason_phrase ?? event.cause,
            answered: false,
            offer,
            answer: null,
          }),
      },
    });
    follow(session);
  });
}

/** Waits for an incoming call still ringing; those that ended ringing (cancelled) go first. */
async function waitForPending(timeoutMs, what) {
  state.pending = state.pending.filter(({ session }) => !session.isEnded());
  const deadline = Date.now() + timeoutMs;
  while (state.pending.length === 0) {
    if (Date.now() > deadline) throw new Error(what);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits up to `timeoutMs` for an incoming call and leaves it ringing: its offer. */
async function ringing(timeoutMs) {
  await waitForPending(timeoutMs, 'no incoming call is ringing');
  return { offer: state.pending[0].offer };
}

/** Answers the oldest incoming call, waiting up to `timeoutMs` for one. */
async function answer(timeoutMs) {
  await waitForPending(timeoutMs, 'no incoming call to answer');
  const { session, offer } = state.pending.shift();
  follow(session);
  session.answer({ mediaConstraints: { audio: true, video: false }, pcConfig: PC_CONFIG });
  return { from: session.remote_identity.uri.toString(), offer };
}

function hangUp() {
  const session = state.session;
  if (session !== null && !session.isEnded()) session.terminate();
}

/** One digit as SIP INFO (JsSIP's default) or as RFC 4733 events (`rtp`). */
function sendDtmf(digit, via) {
  const session = state.session;
  if (session === null || !session.isEstablished()) return false;
  session.sendDTMF(digit, { duration: 160, transportType: via === 'rtp' ? 'RFC2833' : 'INFO' });
  return true;
}

function iceState() {
  return state.session?.connection?.iceConnectionState ?? null;
}

function listen(windowMs, probesHz = []) {
  return listenTo(state.remote, windowMs, probesHz);
}

async function stop() {
  hangUp();
  if (state.ua?.isRegistered()) {
    const gone = new Promise((r) => state.ua.once('unregistered', r));
    state.ua.unregister();
    await Promise.race([gone, new Promise((r) => setTimeout(r, 1000))]);
  }
  state.ua?.stop();
}

window.phone = {
  register,
  registerDigest,
  registerAgain,
  call,
  ringing,
  answer,
  hangUp,
  sendDtmf,
  iceState,
  listen,
  stop,
  states: () => [...state.states],
  pending: () => state.pending.length,
  ringingState: () => (state.pending[0]?.session.isEnded() ? 'Terminated' : null),
};
