import { Counter, Histogram, type Registry } from 'prom-client';
import {
  DEFAULT_MACHINE_DETECTION,
  type MachineDetectionSettings,
  type MachineReason,
  type MachineResult,
  type MachineVerdict,
} from '../media/pipeline/machine-classifier.js';
import type { MachineDetectionOutcome } from '../state/records.js';
import type { HttpMethod } from './app/app-call.js';
import { hangupCause } from './hangup-causes.js';
import type { LegEnd } from './legs/leg-end.js';
import type { OutboundCallRequest } from './outbound-request.js';

/**
 * What POST Call/ asked of machine detection (wire-compat-messaging.md, Machine detection):
 * `true` reports, `hangup` also hangs up a machine with 9100; with a url the detection is
 * asynchronous (the answer XML runs at once and the url gets the result), without one the
 * answer_url request waits for the result and carries it.
 */
export interface MachineDetectionRequest {
  hangup: boolean;
  callback: { url: string; method: HttpMethod } | null;
  settings: MachineDetectionSettings;
}

/** The request's machine detection, or null when it asked for none. */
export function machineDetectionOf(request: OutboundCallRequest): MachineDetectionRequest | null {
  if (request.machineDetection === null) return null;
  const d = DEFAULT_MACHINE_DETECTION;
  const totalMs = request.machineDetectionTime;
  return {
    hangup: request.machineDetection === 'hangup',
    callback: request.machineDetectionUrl
      ? { url: request.machineDetectionUrl, method: request.machineDetectionMethod }
      : null,
    settings: {
      totalMs,
      // machine_detection_answer_time: the longest wait for the first audio (README).
      firstAudioMs: request.machineDetectionAnswerTime ?? totalMs,
      initialSilenceMs: request.machineDetectionInitialSilence ?? d.initialSilenceMs,
      greetingMs: request.machineDetectionInitialGreeting ?? d.greetingMs,
      afterGreetingSilenceMs: request.machineDetectionSilence ?? d.afterGreetingSilenceMs,
      maximumWords: request.machineDetectionMaximumWords ?? d.maximumWords,
      maximumWordMs: request.machineDetectionMaximumSpeechLength ?? d.maximumWordMs,
    },
  };
}

/** The outcome as the call record keeps it. */
export function outcomeOf(verdict: MachineVerdict, async: boolean): MachineDetectionOutcome {
  return {
    machine: verdict.result === 'machine',
    result: verdict.result,
    reason: verdict.reason,
    decision_ms: verdict.afterMs,
    mode: async ? 'async' : 'sync',
  };
}

/** What a detection needs of its call. */
export interface DetectingCall {
  readonly over: boolean;
  requestParams(): Record<string, string>;
  detectMachine(settings: MachineDetectionSettings): Promise<MachineVerdict>;
  notify(url: string, method: HttpMethod, params: Record<string, string>): void;
  hangup(end: LegEnd): Promise<void>;
  startApplication(): void;
  log(message: string, fields?: Record<string, unknown>): void;
}

const MACHINE_DETECTED: LegEnd = {
  cause: hangupCause('Machine Detected'),
  source: 'Service',
  status: 'completed',
};

/**
 * Runs a call's detection from its answer. Synchronous: the application starts once the
 * verdict is in (its requests carry Machine); asynchronous: it starts at once and the verdict
 * is posted to the url. With `hangup`, a machine is hung up with 9100 either way. `record`
 * keeps the outcome on the call before anything is sent, so every later request carries it.
 */
export async function runMachineDetection(
  call: DetectingCall,
  request: MachineDetectionRequest,
  record: (outcome: MachineDetectionOutcome) => void,
  metrics?: MachineDetectionMetrics,
): Promise<void> {
  const async = request.callback !== null;
  if (async) call.startApplication();
  let verdict: MachineVerdict;
  try {
    verdict = await call.detectMachine(request.settings);
  } catch (error) {
    // The media went away mid-detection: unknown, and the call goes on as the media allows.
    call.log('machine detection failed', { err: error });
    verdict = { result: 'unknown', reason: 'call-ended', afterMs: 0, firstAudioMs: null, words: 0 };
  }
  if (call.over || verdict.reason === 'call-ended') return;
  record(outcomeOf(verdict, async));
  metrics?.observe(verdict, async);
  const machine = verdict.result === 'machine';
  if (request.callback) {
    call.notify(request.callback.url, request.callback.method, {
      ...call.requestParams(),
      Direction: 'outbound',
      Event: 'MachineDetection',
      CallStatus: 'in-progress',
      Machine: String(machine),
      IfMachine: request.hangup ? 'hangup' : 'continue',
    });
  }
  if (machine && request.hangup) {
    await call.hangup(MACHINE_DETECTED);
    return;
  }
  if (!async) call.startApplication();
}

/** Detection results on /metrics: counts by result and mode, and decision times. */
export class MachineDetectionMetrics {
  private readonly results: Counter<'result' | 'reason' | 'mode'>;
  private readonly decision: Histogram<'result'>;

  constructor(registry: Registry) {
    this.results = new Counter({
      name: 'voxgate_machine_detection_results_total',
      help: 'Answering-machine detections by result (machine, human, unknown), reason and mode (sync, async)',
      labelNames: ['result', 'reason', 'mode'],
      registers: [registry],
    });
    this.decision = new Histogram({
      name: 'voxgate_machine_detection_decision_seconds',
      help: 'Answering-machine detection: time from the answer to the verdict, by result',
      labelNames: ['result'],
      buckets: [0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10, 20, 45],
      registers: [registry],
    });
  }

  observe(
    verdict: { result: MachineResult; reason: MachineReason; afterMs: number },
    async: boolean,
  ): void {
    this.results.inc({
      result: verdict.result,
      reason: verdict.reason,
      mode: async ? 'async' : 'sync',
    });
    this.decision.observe({ result: verdict.result }, verdict.afterMs / 1000);
  }
}
