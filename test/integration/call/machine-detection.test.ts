import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClipLine } from '../../../bench/amd/callee.js';
import { corpusSpecs, renderClip, type Clip } from '../../../bench/amd/corpus.js';
import { ClientApp, expectValidSignatures } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * Machine detection on calls placed with POST Call/: a SIPp carrier answers, and a callee's
 * RTP line plays clips of the bench/amd corpus (a hello, voicemail greetings, an IVR menu)
 * into the call; the gateway's verdict reaches the answer_url, the hangup callback, the
 * machine_detection_url, the call record and /metrics.
 */
let gw: TestGateway;
let app: ClientApp;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];
const lines: ClipLine[] = [];
const specs = corpusSpecs();

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
});

afterEach(async () => {
  for (const line of lines.splice(0)) line.stop();
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
});

afterAll(async () => {
  await gw.close();
  await app.close();
});

function clip(id: string): Clip {
  return renderClip(specs.find((s) => s.id === id)!);
}

/** Places a call to a carrier whose callee plays `clip` (nothing when null) once answered. */
async function callPlaying(clipToPlay: Clip | null, params: Record<string, string>) {
  const peer = await RtpPeer.open();
  peers.push(peer);
  const uas = await startSippUas({
    scenario: 'carrier-answer.xml',
    variables: { rtp_port: String(peer.port) },
  });
  carriers.push(uas);
  const response = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
    json: {
      from: '+14155550100',
      to: `sip:callee@127.0.0.1:${uas.port}`,
      answer_url: `${app.baseUrl}/answer`,
      hangup_url: `${app.baseUrl}/hangup`,
      ...params,
    },
  });
  expect(response.status).toBe(201);
  if (clipToPlay) {
    const line = new ClipLine(peer);
    lines.push(line);
    expect(await line.play(clipToPlay.ulaw)).not.toBeNull();
  }
}

async function hangupCallback() {
  await until(() => app.requestsTo('/hangup').length > 0, 15_000);
  return app.requestsTo('/hangup')[0]!;
}

async function recordOf(uuid: string) {
  let record;
  await until(async () => {
    record = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${uuid}/`);
    return record.status === 200;
  });
  return record!.body;
}

const tokens = () => ({ accountToken: gw.main.token, mainToken: gw.main.token });

describe('machine detection on outbound calls', () => {
  it('sync true: the answer_url waits for the verdict and carries Machine=false for a hello', async () => {
    app.serve('/answer', { body: '<Response><Hangup/></Response>' });
    await callPlaying(clip('018-short-hello'), { machine_detection: 'true' });
    const hangup = await hangupCallback();
    const [answer] = app.requestsTo('/answer');
    expect(answer!.params).toMatchObject({ Event: 'StartApp', Machine: 'false' });
    expectValidSignatures(answer!, tokens());
    expect(hangup.params).toMatchObject({ Machine: 'false', HangupCauseCode: '4000' });
    const record = await recordOf(hangup.params.CallUUID!);
    expect(record.machine_detection).toMatchObject({
      machine: false,
      result: 'human',
      reason: 'silence-after-greeting',
      mode: 'sync',
    });
    const metrics = await gw.request('GET', '/metrics', { as: null });
    expect(metrics.text).toMatch(
      /voxgate_machine_detection_results_total\{result="human",reason="silence-after-greeting",mode="sync"\} 1/,
    );
  }, 20_000);

  it('sync hangup: an IVR is hung up with 9100 Machine Detected, its answer_url never asked', async () => {
    await callPlaying(clip('035-ivr-menu'), { machine_detection: 'hangup' });
    const hangup = await hangupCallback();
    expect(hangup.params).toMatchObject({
      Event: 'Hangup',
      CallStatus: 'completed',
      HangupCauseCode: '9100',
      HangupCauseName: 'Machine Detected',
      Machine: 'true',
    });
    expectValidSignatures(hangup, tokens());
    expect(app.requestsTo('/answer')).toHaveLength(0);
    const record = await recordOf(hangup.params.CallUUID!);
    expect(record).toMatchObject({
      hangup_cause_code: 9100,
      hangup_cause_name: 'Machine Detected',
    });
    expect(record.machine_detection).toMatchObject({ machine: true, result: 'machine' });
    expect(record.machine_detection.decision_ms).toBeGreaterThan(0);
  }, 20_000);

  it('async: the answer XML runs at once and machine_detection_url gets the verdict, signed', async () => {
    app.serve('/answer', { body: '<Response><Wait length="20"/></Response>' });
    await callPlaying(clip('026-ivr-menu'), {
      machine_detection: 'true',
      machine_detection_url: `${app.baseUrl}/amd`,
    });
    // The application started before any verdict, so its request has no Machine.
    await until(() => app.requestsTo('/answer').length > 0, 5000);
    expect(app.requestsTo('/answer')[0]!.params.Machine).toBeUndefined();
    await until(() => app.requestsTo('/amd').length > 0, 10_000);
    const amd = app.requestsTo('/amd')[0]!;
    expectValidSignatures(amd, tokens());
    expect(amd.params).toMatchObject({
      From: '+14155550100',
      Direction: 'outbound',
      Event: 'MachineDetection',
      CallStatus: 'in-progress',
      Machine: 'true',
      IfMachine: 'continue',
    });
    const uuid = amd.params.CallUUID!;
    expect(amd.params).toMatchObject({ ALegUUID: uuid, ALegRequestUUID: amd.params.RequestUUID });
    // The call goes on (continue) until the application's client ends it.
    expect(app.requestsTo('/hangup')).toHaveLength(0);
    expect((await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${uuid}/`)).status).toBe(
      204,
    );
    await hangupCallback();
    expect((await recordOf(uuid)).machine_detection).toMatchObject({
      machine: true,
      mode: 'async',
    });
  }, 20_000);

  it('a callee that sends no audio ends as unknown (Machine=false) within machine_detection_time', async () => {
    app.serve('/answer', { body: '<Response><Hangup/></Response>' });
    await callPlaying(null, { machine_detection: 'hangup', machine_detection_time: '2000' });
    const hangup = await hangupCallback();
    expect(app.requestsTo('/answer')[0]!.params.Machine).toBe('false');
    expect(hangup.params).toMatchObject({ Machine: 'false', HangupCauseCode: '4000' });
    expect((await recordOf(hangup.params.CallUUID!)).machine_detection).toMatchObject({
      result: 'unknown',
      reason: 'no-audio',
    });
  }, 20_000);
});
