import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { MM7_PASSWORD, MM7_USER, Mmsc } from '../../support/mmsc.js';
import { describeEachStore } from '../../support/stores.js';
import { until } from '../../support/wait.js';

const US = '14155550100';
const CUSTOMER = '14155550177';

/** Bytes 0-255 and a PNG signature: what must come out exactly as it went in. */
const PNG = Buffer.concat([
  Buffer.from('89504e470d0a1a0a', 'hex'),
  Buffer.from(Array.from({ length: 256 }, (_, k) => k)),
]);
const JPEG = Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), Buffer.alloc(3000, 0x42)]);

/** A web server with the media a client application would link to. */
async function startMediaServer(): Promise<{ server: Server; url: (path: string) => string }> {
  const files: Record<string, [string, Buffer]> = {
    '/cat.png': ['image/png', PNG],
    '/dog.jpg': ['image/jpeg', JPEG],
    '/big.jpg': ['image/jpeg', Buffer.alloc(5 * 1024 * 1024 + 10, 1)],
    '/app.exe': ['application/x-msdownload', Buffer.from('MZ')],
  };
  const server = createServer((req, res) => {
    const file = files[req.url ?? ''];
    if (!file) return res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': file[0], 'Content-Length': file[1].length }).end(file[1]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: (path) => `http://127.0.0.1:${port}${path}` };
}

describeEachStore('MMS over MM7, with the media store', (target) => {
  let mmsc: Mmsc;
  let media: Awaited<ReturnType<typeof startMediaServer>>;
  let client: ClientApp;
  let gw: TestGateway;
  let base: string;
  let mm7Url: string;

  beforeAll(async () => {
    [mmsc, media, client] = await Promise.all([
      Mmsc.start(),
      startMediaServer(),
      ClientApp.start(),
    ]);
  });
  afterAll(async () => {
    media.server.close();
    await Promise.all([mmsc.close(), client.close()]);
  });
  beforeEach(async () => {
    await target.flush();
    client.reset();
    mmsc.submits.length = 0;
    gw = await startGateway({
      redisUrl: target.redisUrl(),
      listen: true,
      env: { VOXGATE_MMS_MM7_URL: mmsc.url },
    });
    base = `/v1/Account/${gw.main.id}`;
    mm7Url = `http://127.0.0.1:${(gw.gateway.app.server.address() as AddressInfo).port}/v1/MM7/`;
    await gw.request('POST', `${base}/Number/`, {
      json: { numbers: US, carrier: 'c', region: 'r' },
    });
  });
  afterEach(async () => {
    await gw.close();
  });

  const sendMms = (body: Record<string, unknown>) =>
    gw.request('POST', `${base}/Message/`, {
      json: { type: 'mms', src: US, dst: CUSTOMER, url: `${client.baseUrl}/status`, ...body },
    });

  it('sends text and two images to the MMSC as MM7 parts, serves the media, and follows the delivery report', async () => {
    const res = await sendMms({
      text: 'Our new arrivals',
      media_urls: [media.url('/cat.png'), media.url('/dog.jpg')],
    });
    expect(res.status).toBe(202);
    const uuid = res.body.message_uuid[0] as string;
    await until(() => mmsc.submits.length === 1);
    const [submit] = mmsc.submits;
    expect(submit).toMatchObject({
      senderAddress: US,
      recipients: [CUSTOMER],
      deliveryReport: true,
      vaspId: 'voxgate',
    });
    expect(submit!.contentType).toMatch(/^multipart\/related/);
    expect(submit!.parts.map((p) => p.contentType.split(';')[0])).toEqual([
      'text/plain',
      'image/png',
      'image/jpeg',
    ]);
    expect(submit!.parts[0]!.body.toString()).toBe('Our new arrivals');
    expect(submit!.parts[1]!.body.equals(PNG)).toBe(true);
    expect(submit!.parts[2]!.body.equals(JPEG)).toBe(true);

    const list = await gw.request('GET', `${base}/Message/${uuid}/Media/`);
    expect(list.body.objects).toMatchObject([
      { content_type: 'image/png', size: PNG.length, file_name: 'cat.png', message_uuid: uuid },
      { content_type: 'image/jpeg', size: JPEG.length, file_name: 'dog.jpg' },
    ]);
    const file = await gw.download(list.body.objects[0].media_url);
    expect(file.status).toBe(200);
    expect(file.contentType).toBe('image/png');
    expect(file.body.equals(PNG)).toBe(true);
    const sub = await gw.subaccount();
    const foreign = await gw.request('GET', list.body.objects[0].media_url, { as: sub });
    expect(foreign.status).toBe(401);
    const hidden = await gw.request(
      'GET',
      `/v1/Account/${sub.id}/Message/${uuid}/Media/${list.body.objects[0].media_id}/`,
      { as: sub },
    );
    expect(hidden.status).toBe(404);

    await until(
      async () =>
        (await gw.request('GET', `${base}/Message/${uuid}/`)).body.message_state === 'sent',
    );
    const messageId = (await gw.gateway.state.messages.get(gw.main.id, uuid))!.parts[0]!
      .carrier_id!;
    expect(messageId).toMatch(/^MMSC-/);
    const answer = await mmsc.deliveryReport(mm7Url, messageId, CUSTOMER, 'Retrieved');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(/DeliveryReportRsp/);
    expect(answer.body).toMatch(/1000/);
    expect((await gw.request('GET', `${base}/Message/${uuid}/`)).body).toMatchObject({
      message_type: 'mms',
      message_state: 'delivered',
      error_code: '000',
    });
  });

  it('hands an inbound MMS to message_url with its media in our store', async () => {
    const app = await gw.request('POST', `${base}/Application/`, {
      json: {
        app_name: 'mms',
        answer_url: `${client.baseUrl}/a`,
        message_url: `${client.baseUrl}/in`,
      },
    });
    await gw.request('POST', `${base}/Number/${US}/`, { json: { app_id: app.body.app_id } });
    const answer = await mmsc.deliver(mm7Url, CUSTOMER, US, [
      { contentType: 'text/plain; charset=utf-8', contentId: 'text', body: Buffer.from('look!') },
      { contentType: 'image/png', contentId: 'img', body: PNG, filename: 'cat.png' },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(/DeliverRsp/);
    const [request] = await client.waitForRequests(1);
    const params = Object.fromEntries(new URLSearchParams(request!.body));
    expect(params).toMatchObject({
      From: CUSTOMER,
      To: US,
      Type: 'mms',
      Text: 'look!',
      MediaCount: '1',
    });
    const file = await gw.download(params.Media0!);
    expect(file.status).toBe(200);
    expect(file.body.equals(PNG)).toBe(true);
    const garbled = await fetch(mm7Url, {
      method: 'POST',
      body: '--x\r\nnot mime',
      headers: {
        'content-type': 'multipart/related; boundary=x',
        authorization: `Basic ${Buffer.from(`${MM7_USER}:${MM7_PASSWORD}`).toString('base64')}`,
      },
    });
    expect(garbled.status).toBe(400);
    expect(await garbled.text()).toMatch(/^malformed MM7 request: /);
    const wrong = await fetch(mm7Url, {
      method: 'POST',
      body: '<x/>',
      headers: { 'content-type': 'text/xml' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Basic realm="voxgate MM7"');
  });

  it('refuses media over 5 MB, of a type an MMS cannot carry, or not there, and sends nothing', async () => {
    const cases: [string[], RegExp][] = [
      [
        [media.url('/cat.png'), media.url('/big.jpg')],
        /media_urls\[1\] .*big\.jpg: the media together must be under 5 MB/,
      ],
      [[media.url('/app.exe')], /is application\/x-msdownload: an MMS carries images/],
      [[media.url('/missing.png')], /could not be fetched: HTTP 404/],
      // The outbound guard: cloud metadata, and the gateway's own port.
      [
        ['http://169.254.169.254/latest/cat.png'],
        /media_urls\[0\] .* is refused: 169\.254\.169\.254 is a link-local address .*rule link-local$/,
      ],
      [
        [`http://${mm7Url.slice('http://'.length, mm7Url.indexOf('/v1/'))}/health`],
        /rule own-port$/,
      ],
      [
        Array.from({ length: 11 }, () => media.url('/cat.png')),
        /media_urls holds 11 URLs: at most 10/,
      ],
    ];
    for (const [urls, error] of cases) {
      const res = await sendMms({ media_urls: urls });
      expect(res.status, urls.join(',')).toBe(400);
      expect(res.body.error).toMatch(error);
    }
    const missing = await sendMms({});
    expect(missing.status).toBe(422);
    const list = await gw.request('GET', `${base}/Message/`);
    expect(list.body.meta.total_count).toBe(0);
    expect(mmsc.submits).toHaveLength(0);

    mmsc.refuseNext(2007, 'Message format corrupt');
    const refused = await sendMms({ media_urls: [media.url('/cat.png')] });
    const uuid = refused.body.message_uuid[0] as string;
    await until(
      async () =>
        (await gw.request('GET', `${base}/Message/${uuid}/`)).body.message_state === 'failed',
    );
    expect((await gw.gateway.state.messages.get(gw.main.id, uuid))!.error_message).toBe(
      'the MMSC refused the message: 2007 Message format corrupt',
    );
  });
});
