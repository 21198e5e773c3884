import { pause, type Scheduler } from '../../core/scheduler.js';
import {
  hangupCause,
  INVALID_XML_HANGUP_CAUSE,
  UNREACHABLE_XML_URL_HANGUP_CAUSE,
  type XmlDocumentSource,
} from '../hangup-causes.js';
import type { LegEnd } from '../legs/leg-end.js';
import { AnswerXmlError } from '../xml/answer-xml-error.js';
import type {
  GetDigitsInstruction,
  GetInputInstruction,
  PreAnswerChild,
  ResponseInstruction,
  StreamInstruction,
} from '../xml/answer-document.js';
import type { StreamRequest } from '../streams/stream-request.js';
import { answerXmlCache } from '../xml/answer-xml-cache.js';
import type { AppCall, HttpMethod } from './app-call.js';
import { PromptPlayer } from './prompt-player.js';
import { runRecord } from '../recordings/record-element.js';

/** Where a call's application comes from: the answer_url, or a document of the gateway's own. */
export type AppStart =
  | { url: string; method: HttpMethod; fallback?: { url: string; method: HttpMethod } | null }
  | { xml: string };

/** answer_url: three attempts, within 60 s, before the fallback_url (voice document). */
const ANSWER_ATTEMPTS = 3;
const ANSWER_WINDOW_MS = 60_000;
const RETRY_PAUSE_MS = 1000;
/** Documents in a row allowed to do nothing but redirect before it counts as a loop. */
const MAX_IDLE_REDIRECTS = 10;

/** What a step of the document asks next: go on, run another document, or stop. */
type Next =
  | { kind: 'continue' }
  | { kind: 'document'; instructions: readonly ResponseInstruction[] }
  | { kind: 'stop' };

const CONTINUE: Next = { kind: 'continue' };
const STOP: Next = { kind: 'stop' };

/**
 * Runs a call's answer-XML application: fetches the answer_url (then the fallback_url),
 * executes the instructions in order, follows Redirect and action URLs, and ends the call
 * the way the document says, or with 4010 when it runs out, 8011/8012/8014 when XML is
 * invalid and 7011/7012/7014 when a URL cannot be reached.
 */
export class AnswerApp {
  private scheduledHangup: { cancel(): void } | null = null;
  /** Documents in a row that did nothing but redirect. */
  private idleRedirects = 0;
  private readonly prompts: PromptPlayer;

  constructor(
    private readonly call: AppCall,
    private readonly scheduler: Scheduler,
  ) {
    this.prompts = new PromptPlayer(call, scheduler);
  }

  async run(start: AppStart): Promise<void> {
    try {
      const first = await this.answerDocument(start);
      if (first === null) return;
      let instructions = first;
      for (;;) {
        const next = await this.execute(instructions);
        if (next.kind === 'document') {
          instructions = next.instructions;
          continue;
        }
        if (next.kind === 'continue' && !this.call.over) {
          await this.end({
            cause: hangupCause('End Of XML Instructions'),
            source: 'Answer XML',
            status: 'completed',
          });
        }
        return;
      }
    } catch (error) {
      this.call.log('the application failed', { err: error });
      await this.end({
        cause: hangupCause('Internal Error'),
        source: 'Error',
        status: 'failed',
        reason: `the application failed: ${(error as Error).message}`,
      });
    } finally {
      this.scheduledHangup?.cancel();
    }
  }

  private async answerDocument(start: AppStart): Promise<readonly ResponseInstruction[] | null> {
    if ('xml' in start) return this.parse(start.xml, 'answer');
    const params = { ...this.call.requestParams(), Event: 'StartApp' };
    let body = await this.fetchWithRetries(start.url, start.method, params);
    if (body === null && start.fallback) {
      body = await this.fetchWithRetries(start.fallback.url, start.fallback.method, params);
    }
    if (body === null) {
      await this.end({
        cause: UNREACHABLE_XML_URL_HANGUP_CAUSE.answer,
        source: 'Error',
        status: 'failed',
      });
      return null;
    }
    return this.parse(body, 'answer');
  }

  private async fetchWithRetries(
    url: string,
    method: HttpMethod,
    params: Record<string, string>,
  ): Promise<string | null> {
    const started = this.scheduler.now();
    for (let attempt = 1; attempt <= ANSWER_ATTEMPTS; attempt++) {
      if (this.call.over) return null;
      const fetched = await this.call.fetch(url, method, params);
      if (fetched.ok) return fetched.body;
      this.call.log('answer URL failed', { attempt, error: fetched.error, status: fetched.status });
      // The outbound policy refuses it: trying again would be refused again.
      if (fetched.refused) break;
      if (this.scheduler.now() - started >= ANSWER_WINDOW_MS || attempt === ANSWER_ATTEMPTS) break;
      await pause(this.scheduler, RETRY_PAUSE_MS);
    }
    return null;
  }

  /** Parses a document; invalid XML ends the call with the cause for its source. */
  private async parse(
    body: string,
    source: XmlDocumentSource,
  ): Promise<readonly ResponseInstruction[] | null> {
    try {
      return answerXmlCache.parse(body).instructions;
    } catch (error) {
      if (!(error instanceof AnswerXmlError)) throw error;
      this.call.log('invalid answer XML', { source, reason: error.message });
      await this.end({
        cause: INVALID_XML_HANGUP_CAUSE[source],
        source: 'Error',
        status: 'failed',
      });
      return null;
    }
  }

  /** Fetches and parses an action or redirect document; null when the call has ended over it. */
  private async follow(
    url: string,
    method: HttpMethod,
    params: Record<string, string>,
    source: XmlDocumentSource,
  ): Promise<Next> {
    const fetched = await this.call.fetch(url, method, { ...this.call.requestParams(), ...params });
    if (this.call.over) return STOP;
    if (!fetched.ok) {
      this.call.log(`${source} URL failed`, { error: fetched.error, status: fetched.status });
      await this.end({
        cause: UNREACHABLE_XML_URL_HANGUP_CAUSE[source],
        source: 'Error',
        status: 'failed',
      });
      return STOP;
    }
    const instructions = await this.parse(fetched.body, source);
    return instructions === null ? STOP : { kind: 'document', instructions };
  }

  private async execute(
    instructions: readonly (ResponseInstruction | PreAnswerChild)[],
  ): Promise<Next> {
    let acted = false;
    for (const instruction of instructions) {
      if (this.call.over) return STOP;
      // Every instruction answers the call first, but PreAnswer and a Hangup that refuses it.
      if (instruction.kind !== 'PreAnswer' && !refuses(instruction)) this.call.answer();
      const next = await this.step(instruction);
      if (next.kind === 'continue') {
        acted = true;
        continue;
      }
      if (next.kind === 'document' && instruction.kind === 'Redirect' && !acted) {
        return this.idleRedirect(next);
      }
      this.idleRedirects = 0;
      return next;
    }
    return CONTINUE;
  }

  /**
   * A document that did nothing but redirect. Some in a row are how applications route; more
   * than MAX_IDLE_REDIRECTS is a loop that would fetch for as long as the call lasts, answered
   * and billed, so the call ends as its redirect XML being invalid (8014).
   */
  private async idleRedirect(next: Next): Promise<Next> {
    this.idleRedirects += 1;
    if (this.idleRedirects <= MAX_IDLE_REDIRECTS) return next;
    this.call.log('invalid answer XML', {
      source: 'redirect',
      reason: `${this.idleRedirects} documents in a row did nothing but redirect`,
    });
    await this.end({ cause: INVALID_XML_HANGUP_CAUSE.redirect, source: 'Error', status: 'failed' });
    return STOP;
  }

  private async step(instruction: ResponseInstruction | PreAnswerChild): Promise<Next> {
    switch (instruction.kind) {
      case 'Speak':
      case 'Play':
      case 'Wait':
        await this.prompts.play(instruction);
        return CONTINUE;
      case 'Hangup':
        return this.hangupStep(instruction.schedule, instruction.reason);
      case 'Redirect':
        return this.follow(instruction.url, instruction.method, {}, 'redirect');
      case 'DTMF': {
        const sending = this.call.sendDigits(instruction.digits);
        if (!instruction.async) await sending;
        return CONTINUE;
      }
      case 'GetDigits':
        return this.getDigits(instruction);
      case 'GetInput':
        return this.getInput(instruction);
      case 'PreAnswer':
        this.call.earlyMedia();
        return this.executePreAnswer(instruction.instructions);
      case 'Dial':
        if (!this.call.dial) return this.unsupported('Dial');
        return this.action(instruction, await this.call.dial(instruction));
      case 'Record': {
        if (!this.call.record) return this.unsupported('Record');
        const params = await runRecord(this.call, instruction);
        return params === null ? CONTINUE : this.action(instruction, params);
      }
      case 'Conference': {
        if (!this.call.conference) return this.unsupported('Conference');
        const params = await this.call.conference(instruction);
        if (this.call.over) return STOP;
        if (params === null || instruction.action === null) return CONTINUE;
        if (instruction.redirect)
          return this.follow(instruction.action, instruction.method, params, 'action');
        this.call.notify(instruction.action, instruction.method, {
          ...this.call.requestParams(),
          ...params,
        });
        return CONTINUE;
      }
      case 'Stream': {
        if (!this.call.stream) return this.unsupported('Stream');
        this.call.answer();
        const { ended } = await this.call.stream(streamRequestOf(instruction));
        // keepCallAlive: the next element waits for the stream to end.
        if (instruction.keepCallAlive) await ended;
        return this.call.over ? STOP : CONTINUE;
      }
      default:
        return this.unsupported(instruction.kind);
    }
  }

  /** An element's action: followed, told (redirect="false"), or none; not after a hangup. */
  private action(
    element: { action: string | null; method: HttpMethod; redirect: boolean },
    params: Record<string, string>,
  ): Promise<Next> | Next {
    if (this.call.over || element.action === null) return this.call.over ? STOP : CONTINUE;
    if (element.redirect) return this.follow(element.action, element.method, params, 'action');
    this.call.notify(element.action, element.method, { ...this.call.requestParams(), ...params });
    return CONTINUE;
  }

  private async executePreAnswer(children: readonly PreAnswerChild[]): Promise<Next> {
    for (const child of children) {
      if (this.call.over) return STOP;
      const next = await this.step(child);
      if (next.kind !== 'continue') return next;
    }
    return CONTINUE;
  }

  /** An element the gateway cannot run yet ends the call with a cause that says so. */
  private async unsupported(element: string): Promise<Next> {
    this.call.log(`${element} is not supported by this gateway yet; ending the call`);
    await this.end({
      cause: hangupCause('Internal Error'),
      source: 'Error',
      status: 'failed',
      reason: `${element} is not supported`,
    });
    return STOP;
  }

  private async hangupStep(schedule: number, reason: 'rejected' | 'busy' | null): Promise<Next> {
    if (schedule > 0) {
      this.scheduledHangup?.cancel();
      this.scheduledHangup = this.scheduler.after(schedule * 1000, () => {
        void this.end({
          cause: hangupCause('Scheduled Hangup'),
          source: 'Answer XML',
          status: 'completed',
        });
      });
      return CONTINUE;
    }
    if (reason !== null && !this.call.answered) {
      // A call refused before it is answered (486 busy, 603 rejected) is not billed.
      await this.end({
        cause: hangupCause(reason === 'busy' ? 'Busy Line' : 'Rejected'),
        source: 'Answer XML',
        status: reason === 'busy' ? 'busy' : 'failed',
      });
      return STOP;
    }
    const cause =
      reason === 'busy'
        ? hangupCause('Busy Line')
        : reason === 'rejected'
          ? hangupCause('Rejected')
          : hangupCause('Normal Hangup');
    await this.end({ cause, source: 'Answer XML', status: 'completed' });
    return STOP;
  }

  private async getDigits(instruction: GetDigitsInstruction): Promise<Next> {
    for (let attempt = 0; attempt < Math.max(1, instruction.retries); attempt++) {
      const collected = await this.prompts.collect(
        instruction.prompts,
        {
          timeout: instruction.timeout,
          digitTimeout: instruction.digitTimeout,
          finishOnKey: instruction.finishOnKey,
          numDigits: instruction.numDigits,
        },
        instruction.playBeep,
      );
      if (this.call.over || collected === null) return STOP;
      if (collected === '') continue;
      const valid = [...collected].every((d) => instruction.validDigits.includes(d));
      if (!valid) {
        if (instruction.invalidDigitsSound)
          await this.call
            .play({ kind: 'file', url: instruction.invalidDigitsSound }, {})
            .catch(() => false);
        continue;
      }
      if (instruction.action === null) return CONTINUE;
      if (!instruction.redirect) {
        this.call.notify(instruction.action, instruction.method, {
          ...this.call.requestParams(),
          Digits: collected,
        });
        return CONTINUE;
      }
      return this.follow(instruction.action, instruction.method, { Digits: collected }, 'action');
    }
    return CONTINUE;
  }

  private async getInput(instruction: GetInputInstruction): Promise<Next> {
    if (instruction.inputType === 'speech') {
      this.call.log(
        'GetInput with inputType speech needs speech recognition, which this gateway lacks; ending the call',
      );
      return this.unsupported('GetInput speech');
    }
    const collected = await this.prompts.collect(instruction.prompts, {
      timeout: instruction.executionTimeout,
      digitTimeout: instruction.digitEndTimeout === 'auto' ? 5 : instruction.digitEndTimeout,
      finishOnKey: instruction.finishOnKey,
      numDigits: instruction.numDigits,
      maxSeconds: instruction.executionTimeout,
    });
    if (this.call.over || collected === null) return STOP;
    // No input within executionTimeout: the next element runs, and the action is not called.
    if (collected === '') return CONTINUE;
    return this.follow(
      instruction.action,
      instruction.method,
      { InputType: 'dtmf', Digits: collected },
      'action',
    );
  }

  /** Ends the call; the call turns the status into `completed` when it was answered. */
  private async end(end: LegEnd): Promise<void> {
    if (this.call.over) return;
    await this.call.hangup(end);
  }
}

/** The answer XML's Stream as the request the REST API would make. */
function streamRequestOf(instruction: StreamInstruction): StreamRequest {
  return {
    serviceUrl: instruction.url,
    bidirectional: instruction.bidirectional,
    audioTrack: instruction.audioTrack,
    streamTimeout: instruction.streamTimeout,
    contentType: instruction.contentType,
    statusCallbackUrl: instruction.statusCallbackUrl,
    statusCallbackMethod: instruction.statusCallbackMethod,
    extraHeaders: Object.entries(instruction.extraHeaders)
      .map(([key, value]) => `${key}=${value}`)
      .join(','),
    noiseCancellation: instruction.noiseCancellation,
    noiseCancellationLevel: instruction.noiseCancellationLevel,
  };
}

/** A Hangup with a reason (rejected, busy) and no schedule refuses a call not answered yet. */
const refuses = (instruction: ResponseInstruction | PreAnswerChild): boolean =>
  instruction.kind === 'Hangup' && instruction.schedule === 0 && instruction.reason !== null;
