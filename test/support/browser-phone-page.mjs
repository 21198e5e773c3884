// The page side of browser-phone.ts: sip.js 0.21 in Chromium, bundled by esbuild and driven
// from Node through page.evaluate on `window.phone`. Plain JavaScript, because the project's
// TypeScript is compiled for Node without the DOM library.
import { Inviter, Registerer, RegistererState, SessionState, UserAgent } from 'sip.js';
import { listenTo } from './page-audio.mjs';

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
  return registerAgain();
}

/** Sends the REGISTER again (a refresh): its final response. */
function registerAgain() {
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

/** Listens to the call's remote audio (see page-audio.mjs). */
function listen(windowMs, probesHz = []) {
  return listenTo(state.session?.sessionDescriptionHandler?.remoteMediaStream, windowMs, probesHz);
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
  registerAgain,
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
