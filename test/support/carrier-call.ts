import { expect } from 'vitest';
import type { ClientApp } from './client-app.js';
import type { TestGateway } from './gateway.js';
import { RtpPeer } from './rtp-peer.js';
import { startSippUas, type SippUas } from './sipp.js';
import { until } from './wait.js';

/** What a test file keeps for its calls: the gateway, the customer's app, and what to stop. */
export interface CarrierCallSetup {
  gw: TestGateway;
  app: ClientApp;
  /** Carriers and media peers started for a call, for the file's afterEach to stop. */
  carriers: SippUas[];
  peers: RtpPeer[];
}

export interface CarrierCall {
  requestUuid: string;
  /** The carrier's media: a plain RTP peer. */
  media: RtpPeer;
  uas: SippUas;
}

/**
 * Places a call through POST Call/ to a SIPp carrier that answers (its media a plain RTP peer
 * of the test), with `xml` as the answer document; resolves once the gateway accepted it (201).
 * `params` adds to, or replaces, the request's from, to and answer_url; `scenario` is the
 * carrier's (one that answers with its SDP to `rtp_port`).
 */
export async function placeCarrierCall(
  setup: CarrierCallSetup,
  xml: string,
  params: Record<string, string> = {},
  scenario = 'carrier-answer.xml',
): Promise<CarrierCall> {
  const { gw, app } = setup;
  const media = await RtpPeer.open();
  setup.peers.push(media);
  const uas = await startSippUas({
    scenario,
    variables: { rtp_port: String(media.port) },
  });
  setup.carriers.push(uas);
  app.serve('/answer', { body: xml });
  const fired = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
    json: {
      from: '+14155550100',
      to: `sip:alice@127.0.0.1:${uas.port}`,
      answer_url: `${app.baseUrl}/answer`,
      ...params,
    },
  });
  expect(fired.status).toBe(201);
  return { requestUuid: fired.body.request_uuid as string, media, uas };
}

/** The CallUUID of a call placed with placeCarrierCall, once its answer_url was fetched. */
export async function answeredCallUuid(app: ClientApp, requestUuid: string): Promise<string> {
  const answer = () => app.requestsTo('/answer').find((r) => r.params.RequestUUID === requestUuid);
  await until(() => answer() !== undefined, 15_000);
  return answer()!.params.CallUUID!;
}

/**
 * Hangs up every call of each gateway and waits for them to end: a test does this before its
 * carriers stop, since a BYE to a stopped carrier waits 32 s for its answer and closing a
 * gateway waits for it (up to VOXGATE_SHUTDOWN_GRACE).
 */
export async function hangUpAllCalls(gateways: TestGateway[]): Promise<void> {
  for (const gw of gateways) await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/`);
  await until(() => gateways.every((gw) => gw.gateway.calls.liveCount === 0), 10_000);
}
