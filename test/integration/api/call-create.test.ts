import type { ChatAppTemplates } from '../../../src/messaging/chatapp/chatapp-templates.js';
import type { MessagePipeline } from '../../../src/messaging/message-pipeline.js';
import type { MediaStore } from '../../../src/messaging/mms/media-store.js';
import type { TollfreeVerifications } from '../../../src/tollfree/verifications.js';
import type { ConferenceControl } from '../../../src/call/conferences/conference-control.js';
import type { CallControl } from '../../../src/call/live-control.js';
import type { CallEngine } from '../../../src/call/call-engine.js';
import { selfHostedGuard } from '../../../src/core/outbound-guard.js';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TypedApp } from '../../../src/api/api-context.js';
import { Authenticator, installAuthentication } from '../../../src/api/auth.js';
import { UriBuilder } from '../../../src/api/envelope.js';
import { buildHttpApp } from '../../../src/api/http-app.js';
import { callCreateRoutes } from '../../../src/api/routes/call-create.js';
import type { CallLauncher, CallOwner } from '../../../src/call/call-launcher.js';
import type { OutboundCallRequest } from '../../../src/call/outbound-request.js';
import { systemClock } from '../../../src/core/clock.js';
import { ApiError } from '../../../src/core/errors.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import { ensureMainAccount } from '../../../src/state/main-account.js';
import { createState } from '../../../src/state/state.js';
import { UUID } from '../../support/gateway.js';

const PASSWORD = 'Tr0ub4dorAndMore';

/** A launcher that records what it is asked to fire, and can be told to refuse. */
class RecordingLauncher implements CallLauncher {
  readonly fired: { owner: CallOwner; request: OutboundCallRequest; sourceIp: string }[] = [];
  refusal: ApiError | null = null;

  async fire(owner: CallOwner, request: OutboundCallRequest, sourceIp: string) {
    if (this.refusal) throw this.refusal;
    this.fired.push({ owner, request, sourceIp });
    return { requestUuid: `req-${this.fired.length}` };
  }
}

interface Harness {
  app: TypedApp;
  authId: string;
  authorization: string;
  launcher: RecordingLauncher;
  logs: string[];
}

/**
 * The route on the gateway's own HTTP app and authentication, with a launcher that records
 * what it is asked to place instead of placing calls.
 */
async function startApp(): Promise<Harness> {
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  const state = createState(new EmbeddedStore());
  const main = await ensureMainAccount(state, systemClock, null);
  const app = await buildHttpApp({ logLevel: 'debug', logStream: stream });
  const authenticator = new Authenticator(state);
  const launcher = new RecordingLauncher();
  const context = {
    state,
    uris: new UriBuilder(''),
    authenticator,
    clock: systemClock,
    sipDomain: 'x',
    // The route only fires calls; the rest of the engine is not reached here.
    calls: launcher as unknown as CallEngine,
    control: null as unknown as CallControl,
    conferences: null as unknown as ConferenceControl,
    messages: null as unknown as MessagePipeline,
    chatAppTemplates: null as unknown as ChatAppTemplates,
    mediaStore: null as unknown as MediaStore,
    tollfree: null as unknown as TollfreeVerifications,
    outbound: selfHostedGuard(),
    inboundCarriers: 'open' as const,
  };
  await app.register(async (scope: TypedApp) => {
    installAuthentication(scope, authenticator);
    callCreateRoutes(scope, context, launcher);
  });
  await app.ready();
  const authorization = `Basic ${Buffer.from(`${main.authId}:${main.authToken}`).toString('base64')}`;
  return { app, authId: main.authId, authorization, launcher, logs };
}

describe('POST /v1/Account/{auth_id}/Call/', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startApp();
  });
  afterEach(async () => {
    await h.app.close();
  });

  const path = () => `/v1/Account/${h.authId}/Call/`;
  const post = async (
    body: { json?: unknown; form?: Record<string, string> },
    options: { authorization?: string; url?: string } = {},
  ) => {
    const headers: Record<string, string> = {
      authorization: options.authorization ?? h.authorization,
    };
    let payload: string | undefined;
    if (body.json !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body.json);
    } else if (body.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = new URLSearchParams(body.form).toString();
    }
    const res = await h.app.inject({
      method: 'POST',
      url: options.url ?? path(),
      headers,
      payload,
    });
    return { status: res.statusCode, body: res.json(), text: res.body };
  };
  const VALID = {
    from: '14155550100',
    to: '14155550111<sip:bob@example.com',
    answer_url: 'https://example.com/answer',
  };

  it('fires the call and answers 201 with message, request_uuid and api_id', async () => {
    const res = await post({ json: VALID });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['message', 'request_uuid', 'api_id']);
    expect(res.body).toEqual({
      message: 'call fired',
      request_uuid: 'req-1',
      api_id: expect.stringMatching(UUID),
    });
    expect(h.launcher.fired).toHaveLength(1);
    const [fired] = h.launcher.fired;
    expect(fired?.owner).toEqual({ authId: h.authId, tenant: h.authId, isMain: true });
    expect(fired?.sourceIp).toBe('127.0.0.1');
    expect(fired?.request).toMatchObject({
      from: '+14155550100',
      to: [
        { kind: 'number', number: '+14155550111' },
        { kind: 'sip', uri: 'sip:bob@example.com' },
      ],
      answerMethod: 'POST',
      timeLimit: 14400,
    });
  });

  it('accepts the path without its trailing slash', async () => {
    const res = await post({ json: VALID }, { url: `/v1/Account/${h.authId}/Call` });
    expect(res.status).toBe(201);
  });

  it('accepts a form body, with booleans and integers as strings', async () => {
    const res = await post({
      form: {
        ...VALID,
        send_on_preanswer: 'true',
        error_if_parent_not_found: 'false',
        time_limit: '120',
        machine_detection: 'true',
        machine_detection_time: '3000',
        sip_headers: 'Customer=42,PH-Internal=1',
        // An unencoded + in a form arrives as a space; the number is still read.
        to: '+14155550111',
      },
    });
    expect(res.status).toBe(201);
    expect(h.launcher.fired[0]?.request).toMatchObject({
      to: [{ kind: 'number', number: '+14155550111' }],
      sendOnPreanswer: true,
      errorIfParentNotFound: false,
      timeLimit: 120,
      machineDetection: 'true',
      machineDetectionTime: 3000,
      sipHeaders: [{ key: 'Customer', value: '42' }],
    });
  });

  it('accepts JSON booleans, and booleans as strings in JSON', async () => {
    expect((await post({ json: { ...VALID, send_on_preanswer: true } })).status).toBe(201);
    expect((await post({ json: { ...VALID, send_on_preanswer: 'true' } })).status).toBe(201);
    expect(h.launcher.fired.map((f) => f.request.sendOnPreanswer)).toEqual([true, true]);
  });

  it.each(['from', 'to', 'answer_url'])('answers 422 when %s is missing', async (name) => {
    const body: Record<string, string> = { ...VALID };
    delete body[name];
    for (const res of [await post({ json: body }), await post({ form: body })]) {
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        api_id: expect.stringMatching(UUID),
        error: `missing required parameter: ${name}`,
      });
    }
    expect(h.launcher.fired).toEqual([]);
  });

  it('answers 422 for a POST without a body', async () => {
    const res = await post({});
    expect(res).toMatchObject({
      status: 422,
      body: { error: 'missing required parameter: from' },
    });
  });

  it.each([
    [{ from: 'sip:alice@example.com' }, 'invalid from: must be a phone number in E.164 format'],
    [{ answer_url: 'ftp://example.com' }, 'invalid answer_url: must be an http or https URL'],
    [{ ring_method: 'PUT' }, 'invalid ring_method: must be GET or POST'],
    [{ time_limit: '0' }, 'invalid time_limit: must be an integer from 1 to 86400 (seconds)'],
    [{ time_limit: 'soon' }, 'invalid time_limit: must be an integer from 1 to 86400 (seconds)'],
    [
      { machine_detection_maximum_words: '11' },
      'invalid machine_detection_maximum_words: must be an integer from 2 to 10',
    ],
    [{ machine_detection: 'maybe' }, 'invalid machine_detection: must be true or hangup'],
    [{ send_on_preanswer: 'yes' }, 'invalid send_on_preanswer: must be true or false'],
    [{ call_type: 'video' }, 'invalid call_type: must be voice or chatapp_voice'],
    [{ parent_call_uuid: '42' }, 'invalid parent_call_uuid: must be a UUID'],
    [
      { to: '14155550111<<sip:bob@example.com' },
      'invalid to: must be E.164 phone numbers or sip:/sips: URIs separated by the delimiter, at most 1000; destination 2 is empty',
    ],
  ])('answers 400 for %j, in JSON and in a form', async (extra, error) => {
    for (const res of [
      await post({ json: { ...VALID, ...extra } }),
      await post({ form: { ...VALID, ...extra } }),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ api_id: expect.stringMatching(UUID), error });
    }
    expect(h.launcher.fired).toEqual([]);
  });

  it('refuses SIP credentials for a phone destination', async () => {
    const res = await post({
      json: { ...VALID, sip_auth_username: 'trunk', sip_auth_password: PASSWORD },
    });
    expect(res).toMatchObject({
      status: 400,
      body: {
        error:
          'invalid sip_auth_username: must be used only when every destination in to is a SIP URI',
      },
    });
  });

  it('never lets sip_auth_password reach a response or a log line', async () => {
    const sip = { ...VALID, to: 'sip:bob@example.com' };
    const auth = { sip_auth_username: 'trunk', sip_auth_password: PASSWORD };
    const responses = [
      await post({ json: { ...sip, ...auth } }),
      await post({ form: { ...sip, ...auth } }),
      await post({ json: { ...sip, ...auth, sip_auth_password: 'weakpass' } }),
      await post({ json: { ...VALID, ...auth } }),
      await post({ form: { ...sip, ...auth, time_limit: 'never' } }),
    ];
    expect(responses.map((r) => r.status)).toEqual([201, 201, 400, 400, 400]);
    expect(h.launcher.fired[0]?.request.sipAuth?.password).toBe(PASSWORD);
    h.launcher.refusal = new ApiError('upstream', 'carrier unavailable');
    responses.push(await post({ json: { ...sip, ...auth } }));
    expect(responses.at(-1)?.status).toBe(502);
    expect(h.logs.length).toBeGreaterThan(0);
    for (const text of [...responses.map((r) => r.text), ...h.logs]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain('weakpass');
    }
  });

  it('answers the launcher refusal as an API error', async () => {
    h.launcher.refusal = new ApiError('rate_limited', 'too many calls in progress');
    const res = await post({ json: VALID });
    expect(res).toMatchObject({ status: 429, body: { error: 'too many calls in progress' } });
  });

  it('answers 401 without credentials or for another account', async () => {
    expect((await post({ json: VALID }, { authorization: '' })).status).toBe(401);
    const other = await post({ json: VALID }, { url: '/v1/Account/MAOTHER0000000000000/Call/' });
    expect(other.status).toBe(401);
    expect(h.launcher.fired).toEqual([]);
  });

  it('documents every parameter with its rule', () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const spec = h.app.swagger() as any;
    const schema =
      spec.paths['/v1/Account/{auth_id}/Call/'].post.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['from', 'to', 'answer_url']);
    expect(Object.keys(schema.properties)).toHaveLength(34);
    expect(schema.properties.sip_auth_password.description).toBe(
      '8 to 128 characters with at least one upper-case letter, one lower-case letter and one digit',
    );
  });
});
