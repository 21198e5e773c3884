import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import {
  ClientApp,
  expectValidSignatures,
  paramsBySequence,
  paramsOf,
} from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import {
  GraphUpstream,
  inboundMessages,
  messageStatuses,
  postWebhook,
  templateReview,
  webhookBody,
} from '../../support/graph-upstream.js';
import { describeEachStore } from '../../support/stores.js';
import { until } from '../../support/wait.js';

const WABA = '102290129340398';
const PHONE_ID = '106540352242922';
const NUMBER = '14155550100';
const ACCESS_TOKEN = 'EAAGm0PX4ZCpsBAAccessTokenForTests';
const APP_SECRET = 'app-secret-for-tests-0123456789';
const DAY = 24 * 60 * 60 * 1000;

const ORDER_UPDATE = {
  name: 'order_update',
  language: 'en_US',
  category: 'UTILITY',
  components: [
    {
      type: 'BODY',
      text: 'Hello {{1}}, your order {{2}} has shipped.',
      example: { body_text: [['Ana', 'A-1001']] },
    },
    { type: 'FOOTER', text: 'Reply STOP to opt out' },
  ],
};

describeEachStore(
  'chat-app: business accounts, templates, sends, statuses and inbound messages',
  (target) => {
    let upstream: GraphUpstream;
    let client: ClientApp;
    let gw: TestGateway;
    let clock: ManualClock;
    let base: string;
    let webhookUrl: string;

    beforeAll(async () => {
      [upstream, client] = await Promise.all([GraphUpstream.start(), ClientApp.start()]);
      upstream.allow(ACCESS_TOKEN, WABA, PHONE_ID);
    });
    afterAll(async () => {
      await Promise.all([upstream.close(), client.close()]);
    });
    /** A gateway with the business account connected (chat-app retries after 1 s). */
    const connect = async () => {
      gw = await startGateway({
        redisUrl: target.redisUrl(),
        clock,
        listen: true,
        env: {
          VOXGATE_CHATAPP_GRAPH_URL: upstream.baseUrl,
          VOXGATE_CHATAPP_TIMEOUT: '1',
          VOXGATE_CHATAPP_RETRY: '1',
        },
      });
      base = `/v1/Account/${gw.main.id}`;
      const port = (gw.gateway.app.server.address() as AddressInfo).port;
      webhookUrl = `http://127.0.0.1:${port}/v1/ChatApp/Webhook/${WABA}/`;
      await gw.request('POST', `${base}/Number/`, {
        json: { numbers: NUMBER, carrier: 'c', region: 'r' },
      });
      const res = await gw.request('POST', `${base}/ChatApp/BusinessAccount/`, {
        json: {
          biz_account_id: WABA,
          access_token: ACCESS_TOKEN,
          app_secret: APP_SECRET,
          verify_token: 'verify-me-please',
          webhook_url: `${client.baseUrl}/template-events`,
          phone_numbers: [{ number: `+${NUMBER}`, phone_number_id: PHONE_ID }],
        },
      });
      expect(res.status).toBe(201);
    };
    beforeEach(async () => {
      await target.flush();
      client.reset();
      upstream.reset();
      clock = new ManualClock(Date.now());
      await connect();
    });
    afterEach(async () => {
      await gw.close();
    });

    const templates = `/ChatApp/Template/${WABA}/`;
    const createTemplate = (body: unknown = ORDER_UPDATE) =>
      gw.request('POST', `${base}${templates}`, { json: body });
    const getTemplate = async (id: string) =>
      (await gw.request('GET', `${base}${templates}${id}/`)).body;
    const review = (id: string, event: string, reason?: string) =>
      postWebhook(
        webhookUrl,
        templateReview(WABA, { id, name: 'order_update', language: 'en_US', event, reason }),
        APP_SECRET,
      );

    it('keeps the secrets of a business account out of every answer and log line', async () => {
      const account = await gw.request('GET', `${base}/ChatApp/BusinessAccount/${WABA}/`);
      expect(account.status).toBe(200);
      expect(account.body).toMatchObject({
        biz_account_id: WABA,
        phone_numbers: [{ number: NUMBER, phone_number_id: PHONE_ID }],
        upstream_webhook_url: `/v1/ChatApp/Webhook/${WABA}/`,
      });
      const list = await gw.request('GET', `${base}/ChatApp/BusinessAccount/`);
      expect(list.body.meta.total_count).toBe(1);
      for (const text of [account.text, list.text, gw.logs.join('\n')]) {
        expect(text).not.toContain(ACCESS_TOKEN);
        expect(text).not.toContain(APP_SECRET);
        expect(text).not.toContain('verify-me-please');
      }
      const other = await gw.request('POST', `${base}/ChatApp/BusinessAccount/`, {
        json: {
          biz_account_id: '999',
          access_token: ACCESS_TOKEN,
          app_secret: APP_SECRET,
          phone_numbers: [{ number: '14155550111', phone_number_id: '1' }],
        },
      });
      expect(other.status).toBe(400);
      expect(other.body.error).toBe(
        'phone_numbers[0].number 14155550111 is not a number of this account',
      );
      const again = await gw.request('POST', `${base}/ChatApp/BusinessAccount/`, {
        json: { biz_account_id: WABA, access_token: ACCESS_TOKEN, app_secret: APP_SECRET },
      });
      expect(again.status).toBe(409);
    });

    it('answers the subscription check only with the verify token', async () => {
      const check = (token: string) =>
        fetch(
          `${webhookUrl}?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=1158201444`,
        );
      const right = await check('verify-me-please');
      expect(right.status).toBe(200);
      expect(await right.text()).toBe('1158201444');
      expect((await check('wrong')).status).toBe(403);
    });

    it('takes a template from create through review, update and delete to the 30-day name refusal', async () => {
      const created = await createTemplate();
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        status: 'success',
        template_name: 'order_update',
        template_status: 'PENDING',
        template_language: 'en_US',
        template_category: 'UTILITY',
      });
      const id = created.body.template_id as string;
      const [sent] = upstream.requestsTo(`/${WABA}/message_templates`);
      expect(sent).toMatchObject({
        method: 'POST',
        authorization: `Bearer ${ACCESS_TOKEN}`,
        body: { name: 'order_update', language: 'en_US', category: 'UTILITY' },
      });
      expect(sent!.body.components).toEqual(ORDER_UPDATE.components);
      expect(await getTemplate(id)).toMatchObject({ status: 'PENDING', rejected_reason: 'NONE' });

      expect((await review(id, 'APPROVED')).status).toBe(200);
      expect(await getTemplate(id)).toMatchObject({ status: 'APPROVED', rejected_reason: 'NONE' });
      const [event] = await client.waitForRequests(1);
      expect(paramsOf(event!)).toMatchObject({
        Event: 'message_template_status_update',
        BizAccountId: WABA,
        TemplateId: id,
        TemplateName: 'order_update',
        Status: 'APPROVED',
        RejectedReason: 'NONE',
      });
      expectValidSignatures(event!, { accountToken: gw.main.token, mainToken: gw.main.token });

      const listed = await gw.request('GET', `${base}${templates}?template_name=ORDER`);
      expect(listed.body.objects).toEqual([
        {
          template_id: id,
          name: 'order_update',
          language: 'en_US',
          category: 'UTILITY',
          status: 'APPROVED',
        },
      ]);

      const changed = { ...ORDER_UPDATE, category: 'MARKETING' };
      const updated = await gw.request('POST', `${base}${templates}${id}/`, { json: changed });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({
        template_status: 'PENDING',
        template_category: 'MARKETING',
      });
      expect(upstream.requestsTo(`/${id}`)).toMatchObject([
        { method: 'POST', body: { category: 'MARKETING' } },
      ]);
      expect(await getTemplate(id)).toMatchObject({ status: 'PENDING', category: 'MARKETING' });

      const noName = await gw.request('DELETE', `${base}${templates}${id}/`);
      expect(noName.status).toBe(400);
      expect(noName.body.error).toMatch(/name is required/);
      const deleted = await gw.request('DELETE', `${base}${templates}${id}/?name=order_update`);
      expect(deleted.status).toBe(204);
      expect(upstream.requestsTo(`/${WABA}/message_templates`).at(-1)).toMatchObject({
        method: 'DELETE',
        query: { name: 'order_update', hsm_id: id },
      });
      expect((await gw.request('GET', `${base}${templates}${id}/`)).status).toBe(404);

      const today = new Date(clock.now()).toISOString().slice(0, 10);
      const free = new Date(clock.now() + 30 * DAY).toISOString().slice(0, 10);
      const reused = await createTemplate();
      expect(reused.status).toBe(400);
      expect(reused.body.error).toBe(
        `name order_update was deleted from business account ${WABA} on ${today}: it can be used again from ${free}`,
      );
      clock.advance(30 * DAY);
      expect((await createTemplate()).status).toBe(200);
    });

    it('records a rejection with its reason, and changes nothing for a webhook that does not verify', async () => {
      const id = (await createTemplate()).body.template_id as string;
      const body = templateReview(WABA, {
        id,
        name: 'order_update',
        language: 'en_US',
        event: 'APPROVED',
      });
      const forged = await postWebhook(webhookUrl, body, 'not-the-app-secret');
      expect(forged.status).toBe(401);
      const unsigned = await postWebhook(webhookUrl, body, APP_SECRET, '');
      expect(unsigned.status).toBe(401);
      const garbled = await postWebhook(webhookUrl, '{"entry": [', APP_SECRET);
      expect(garbled.status).toBe(400);
      expect(await getTemplate(id)).toMatchObject({ status: 'PENDING' });
      expect(gw.logs.join('\n')).not.toContain('"entry": [');

      expect((await review(id, 'REJECTED', 'INVALID_FORMAT')).status).toBe(200);
      expect(await getTemplate(id)).toMatchObject({
        status: 'REJECTED',
        rejected_reason: 'INVALID_FORMAT',
      });
      const quality = webhookBody(WABA, 'message_template_quality_update', {
        message_template_id: Number(id),
        message_template_name: 'order_update',
        message_template_language: 'en_US',
        previous_quality_score: 'UNKNOWN',
        new_quality_score: 'GREEN',
      });
      expect((await postWebhook(webhookUrl, quality, APP_SECRET)).status).toBe(200);
      expect(await getTemplate(id)).toMatchObject({ quality_score: { score: 'GREEN' } });
      await until(() => client.requestsTo('/template-events').length === 2);
    });

    it('checks every rule before anything goes upstream, and reports upstream failures as 502 with nothing stored', async () => {
      const bad = await createTemplate({
        ...ORDER_UPDATE,
        components: [{ type: 'BODY', text: '{{1}} shipped', example: { body_text: [['A']] } }],
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/^components\[0\] \(BODY\): /);
      const missing = await createTemplate({
        language: 'en_US',
        category: 'UTILITY',
        components: [],
      });
      expect(missing.status).toBe(422);
      expect(upstream.requests).toHaveLength(0);

      upstream.failNext({ status: 400, code: 100, message: 'Invalid parameter' });
      const refused = await createTemplate();
      expect(refused.status).toBe(502);
      expect(refused.body.error).toBe('upstream error 100: Invalid parameter');
      upstream.failNext('hang');
      const timedOut = await createTemplate();
      expect(timedOut.status).toBe(502);
      expect(timedOut.body.error).toMatch(
        /upstream could not be reached: no response within 1000 ms/,
      );
      const list = await gw.request('GET', `${base}${templates}`);
      expect(list.body.objects).toEqual([]);

      const unknown = await gw.request('GET', `${base}/ChatApp/Template/123/`);
      expect(unknown.status).toBe(404);
    });

    const CUSTOMER = '447400123456';
    const sendChat = (body: Record<string, unknown>) =>
      gw.request('POST', `${base}/Message/`, {
        json: {
          type: 'chatapp',
          src: NUMBER,
          dst: CUSTOMER,
          url: `${client.baseUrl}/status`,
          ...body,
        },
      });
    const recordOf = (uuid: string) => gw.gateway.state.messages.get(gw.main.id, uuid);
    const sentMessages = () => upstream.requestsTo(`/${PHONE_ID}/messages`);

    it('sends text, and a template only once upstream approved it, keeping upstream’s message id', async () => {
      const text = await sendChat({ text: 'Your table is ready' });
      expect(text.status).toBe(202);
      await until(() => sentMessages().length === 1);
      expect(sentMessages()[0]).toMatchObject({
        authorization: `Bearer ${ACCESS_TOKEN}`,
        body: {
          messaging_product: 'whatsapp',
          to: CUSTOMER,
          type: 'text',
          text: { body: 'Your table is ready' },
        },
      });
      await until(
        async () => (await recordOf(text.body.message_uuid[0]))?.message_state === 'sent',
      );
      const record = await recordOf(text.body.message_uuid[0]);
      expect(record).toMatchObject({ message_type: 'chatapp', from_number: NUMBER, units: 1 });
      expect(record!.parts[0]!.carrier_id).toMatch(/^wamid\./);

      const id = (await createTemplate()).body.template_id as string;
      const template = {
        name: 'order_update',
        language: 'en_US',
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Ana' },
              { type: 'text', text: 'A-7' },
            ],
          },
        ],
      };
      const pending = await sendChat({ template });
      expect(pending.status).toBe(400);
      expect(pending.body.error).toBe(
        'template order_update (en_US) is PENDING: only an APPROVED template can be sent',
      );
      await review(id, 'APPROVED');
      const short = await sendChat({
        template: { ...template, components: [{ type: 'body', parameters: [] }] },
      });
      expect(short.status).toBe(400);
      expect(short.body.error).toMatch(/2 placeholder\(s\) and 0 body parameter/);
      expect((await sendChat({ template })).status).toBe(202);
      await until(() => sentMessages().length === 2);
      expect(sentMessages()[1]!.body).toMatchObject({
        type: 'template',
        template: {
          name: 'order_update',
          language: { code: 'en_US' },
          components: template.components,
        },
      });
    });

    it('follows statuses that come out of order, through delivered to read, and never back', async () => {
      const res = await sendChat({ text: 'hi' });
      const uuid = res.body.message_uuid[0] as string;
      await until(async () => (await recordOf(uuid))?.message_state === 'sent');
      const wamid = (await recordOf(uuid))!.parts[0]!.carrier_id!;
      const statuses = (status: 'sent' | 'delivered' | 'read' | 'failed') =>
        postWebhook(
          webhookUrl,
          messageStatuses(WABA, { id: PHONE_ID, display: NUMBER }, [
            {
              id: wamid,
              status,
              recipient: CUSTOMER,
              conversation: { id: 'conv-1', origin: 'service', expires: 1_900_000_000 },
              ...(status === 'failed'
                ? { error: { code: 131047, title: 'Re-engagement message' } }
                : {}),
            },
          ]),
          APP_SECRET,
        );
      expect((await statuses('read')).status).toBe(200);
      expect((await statuses('delivered')).status).toBe(200);
      expect((await statuses('failed')).status).toBe(200);
      expect((await statuses('sent')).status).toBe(200);
      expect(await recordOf(uuid)).toMatchObject({
        message_state: 'read',
        error_code: '000',
        conversation_id: 'conv-1',
        conversation_origin: 'service',
        conversation_expiration_timestamp: 1_900_000_000_000,
      });
      await until(() => client.requestsTo('/status').length === 4);
      const callbacks = paramsBySequence(client.requestsTo('/status'));
      expect(callbacks.map((p) => [p.Status, p.Sequence])).toEqual([
        ['queued', '1'],
        ['sent', '2'],
        ['delivered', '3'],
        ['read', '4'],
      ]);
      const listed = await gw.request('GET', `${base}/Message/${uuid}/`);
      expect(listed.body).toMatchObject({
        message_type: 'chatapp',
        message_state: 'read',
        conversation_id: 'conv-1',
      });
    });

    it('fails a message upstream refuses with upstream’s code and message, and refuses bad sends at once', async () => {
      upstream.failNext({
        status: 400,
        code: 131030,
        message: 'Recipient phone number not in allowed list',
      });
      const res = await sendChat({ text: 'hello' });
      expect(res.status).toBe(202);
      const uuid = res.body.message_uuid[0] as string;
      await until(async () => (await recordOf(uuid))?.message_state === 'failed');
      expect(await recordOf(uuid)).toMatchObject({
        error_code: '300',
        error_message: 'upstream error 131030: Recipient phone number not in allowed list',
      });

      const cases: [Record<string, unknown>, number, string | RegExp][] = [
        [
          { text: 'x'.repeat(4097) },
          400,
          'text holds 4097 characters: a chat-app text is at most 4,096',
        ],
        [{ text: 'hi', src: '14155550111' }, 400, /is not a number of a chat-app business account/],
        [
          { text: 'hi', location: { latitude: 1, longitude: 2 } },
          400,
          'text cannot be sent with location: put it in the location itself',
        ],
        [
          {
            template: { name: 'order_update', language: 'en_US' },
            location: { latitude: 1, longitude: 2 },
          },
          400,
          'template and location cannot be sent together: give one of them',
        ],
        [{}, 422, /missing required parameter: text/],
        [
          { location: { latitude: 91, longitude: 0 } },
          400,
          'location.latitude must be a number from -90 to 90',
        ],
      ];
      for (const [body, status, error] of cases) {
        const refused = await sendChat(body);
        expect(refused.status, JSON.stringify(body)).toBe(status);
        expect(refused.body.error).toMatch(error);
      }
    });

    it('hands inbound chat messages (text, button reply, location) to the number’s message_url, with an inbound record each', async () => {
      const app = await gw.request('POST', `${base}/Application/`, {
        json: {
          app_name: 'chat',
          answer_url: `${client.baseUrl}/a`,
          message_url: `${client.baseUrl}/in`,
        },
      });
      await gw.request('POST', `${base}/Number/${NUMBER}/`, { json: { app_id: app.body.app_id } });
      const body = inboundMessages(
        WABA,
        { id: PHONE_ID, display: NUMBER },
        { waId: CUSTOMER, name: 'Ana' },
        [
          { type: 'text', text: { body: 'Is my order on its way?' } },
          {
            type: 'interactive',
            interactive: { type: 'button_reply', button_reply: { id: 'track-1', title: 'Track' } },
          },
          {
            type: 'location',
            location: { latitude: 51.5, longitude: -0.12, name: 'Shop', address: '1 High St' },
          },
        ],
      );
      expect((await postWebhook(webhookUrl, body, APP_SECRET)).status).toBe(200);
      await until(() => client.requestsTo('/in').length === 3);
      // Each message is its own request, sent moments after the one before: they can arrive in
      // any order, so each is found by its content type.
      const received = client.requestsTo('/in').map((r) => r.params);
      const ofType = (type: string) => received.find((p) => p.ContentType === type);
      expect(ofType('text')).toMatchObject({
        From: CUSTOMER,
        To: NUMBER,
        Type: 'chatapp',
        Body: 'Is my order on its way?',
        ContentType: 'text',
      });
      expect(ofType('button')).toMatchObject({
        ContentType: 'button',
        Body: 'Track',
        ButtonPayload: 'track-1',
      });
      expect(ofType('location')).toMatchObject({
        ContentType: 'location',
        Latitude: '51.5',
        Longitude: '-0.12',
        LocationName: 'Shop',
      });
      expectValidSignatures(client.requestsTo('/in')[0]!, {
        accountToken: gw.main.token,
        mainToken: gw.main.token,
      });
      const list = await gw.request(
        'GET',
        `${base}/Message/?message_direction=inbound&message_type=chatapp`,
      );
      expect(list.body.meta.total_count).toBe(3);
      expect(list.body.objects[0]).toMatchObject({ from_number: CUSTOMER, to_number: NUMBER });
    });

    it('downloads the media a customer sends into our store and hands it to message_url', async () => {
      const app = await gw.request('POST', `${base}/Application/`, {
        json: {
          app_name: 'chat',
          answer_url: `${client.baseUrl}/a`,
          message_url: `${client.baseUrl}/in`,
        },
      });
      await gw.request('POST', `${base}/Number/${NUMBER}/`, {
        json: { app_id: app.body.app_id },
      });
      const photo = Buffer.from(Array.from({ length: 300 }, (_, k) => k % 256));
      upstream.addMedia(WABA, '1485603922289432', 'image/jpeg', photo);
      const body = inboundMessages(
        WABA,
        { id: PHONE_ID, display: NUMBER },
        { waId: CUSTOMER, name: 'Ana' },
        [
          {
            type: 'image',
            image: { id: '1485603922289432', mime_type: 'image/jpeg', caption: 'the dent' },
          },
        ],
      );
      expect((await postWebhook(webhookUrl, body, APP_SECRET)).status).toBe(200);
      const [request] = await client.waitForRequests(1);
      const params = Object.fromEntries(new URLSearchParams(request!.body));
      expect(params).toMatchObject({
        ContentType: 'media',
        Body: 'the dent',
        MediaType: 'image',
        MediaCount: '1',
      });
      const file = await gw.download(params.Media0!);
      expect(file.status).toBe(200);
      expect(file.contentType).toBe('image/jpeg');
      expect(file.body.equals(photo)).toBe(true);
    });

    it('tries a message again while upstream does not answer, and fails it with 420 once it expires', async () => {
      upstream.failNext('hang');
      const res = await sendChat({ text: 'are you there?' });
      const uuid = res.body.message_uuid[0] as string;
      await until(async () => (await recordOf(uuid))?.message_state === 'sent', 10_000);
      expect(sentMessages()).toHaveLength(2);
      expect(gw.logs.filter((l) => l.includes('trying again'))).toHaveLength(1);

      // Upstream busy for longer than the message may wait: it expires in the outbox.
      for (let k = 0; k < 10; k++)
        upstream.failNext({ status: 503, code: 2, message: 'Service temporarily unavailable' });
      const late = await sendChat({ text: 'still there?', message_expiry: 5 });
      const lateUuid = late.body.message_uuid[0] as string;
      await until(async () => (await recordOf(lateUuid))?.message_state === 'failed', 15_000);
      expect(await recordOf(lateUuid)).toMatchObject({
        error_code: '420',
        error_message: 'message expired before it was sent',
      });
    });
  },
);
