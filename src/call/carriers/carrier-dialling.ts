import type { InviteFailure } from '../../sip/ua/outgoing-invite.js';
import { hangupCause } from '../hangup-causes.js';
import { endOfFailedInvite, type LegEnd } from '../legs/leg-end.js';
import type { AttemptPlan, AttemptVerdict, DialAttempt } from '../legs/outbound-leg.js';
import type { CarrierAttempt, CarrierRoutes } from './carrier-routes.js';

type Log = {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
};

export interface CarrierDiallingOptions {
  routes: CarrierRoutes;
  responseTimeoutMs: number;
  answerTimeoutMs: number;
  log: Log;
}

/**
 * Calls to phone numbers through the carriers: a leg's plan is every gateway of every carrier
 * that takes the number (carrier-routes.ts), tried in turn.
 *
 * | outcome of one attempt                              | then                                 |
 * | --------------------------------------------------- | ------------------------------------ |
 * | 408, 5xx, no final response, unreachable            | the next gateway, then next carrier  |
 * | no response within the response timeout             | the next (as 408)                    |
 * | ringing past the answer timeout (not the last one)  | the next                             |
 * | 401/407 after our credentials, or without any       | warn; the next carrier, else 4240    |
 * | any other 4xx, and 6xx (RFC 3261 16.7: definitive)  | the callee's answer: the call ends   |
 *
 * When nothing is left, the call ends with the last attempt's cause (2010 for a 5xx, 3070 for
 * a timeout, 4240 for credentials) and a warn line naming the number and every reason; a
 * number no carrier takes (or whose gateways are all down or unlocatable) ends 5020.
 */
export class CarrierDialling {
  constructor(private readonly options: CarrierDiallingOptions) {}

  /** The plan of one leg's call to `number` from the caller id `caller`. */
  async plan(uuid: string, number: string, caller: string): Promise<AttemptPlan> {
    const { routes, log } = this.options;
    const route = await routes.route(number, caller);
    const reasons = [...route.skipped];
    const refused = new Set<string>();
    const none: LegEnd = {
      cause: hangupCause('Routing Error'),
      source: 'Service',
      status: 'failed',
      reason: `no carrier takes ${number}`,
    };
    if (route.attempts.length === 0) {
      const why =
        routes.carriersFor(number).length === 0
          ? 'no carrier has a prefix that matches it'
          : `every gateway was left out: ${reasons.join('; ')}`;
      log.warn({ callUuid: uuid, to: number, reasons }, `no carrier takes ${number}: ${why}`);
    }
    const judge = (attempt: DialAttempt, failure: InviteFailure | string): AttemptVerdict => {
      const tried = attempt as CarrierAttempt;
      const name = `carrier ${tried.carrier.name} at ${tried.where}`;
      const verdict = this.verdict(tried, failure, refused);
      reasons.push(`${name}: ${describe(failure)}`);
      if (verdict.next) {
        log.info(
          { callUuid: uuid, carrier: tried.carrier.name, gateway: tried.where },
          `${name} did not take the call (${describe(failure)}); trying the next`,
        );
      }
      return verdict;
    };
    return {
      attempts: route.attempts,
      none,
      responseTimeoutMs: this.options.responseTimeoutMs,
      answerTimeoutMs: this.options.answerTimeoutMs,
      judge: (attempt, failure, last) => {
        const verdict = judge(attempt, failure);
        const over = !verdict.next || last;
        if (over && verdict.end.source !== 'Callee')
          log.warn(
            { callUuid: uuid, to: number, reasons },
            `no carrier took the call to ${number}`,
          );
        return verdict;
      },
      skips: (attempt) => refused.has((attempt as CarrierAttempt).carrier.name),
    };
  }

  private verdict(
    attempt: CarrierAttempt,
    failure: InviteFailure | string,
    refused: Set<string>,
  ): AttemptVerdict {
    if (typeof failure === 'string') {
      const timeout = failure.startsWith('no response');
      return {
        next: true,
        end: {
          cause: hangupCause(timeout ? 'Request timeout' : 'No Answer'),
          source: 'Service',
          status: timeout ? 'timeout' : 'no-answer',
          reason: failure,
        },
      };
    }
    const challenged =
      failure.kind === 'auth-failed' ||
      (failure.kind === 'rejected' && (failure.status === 401 || failure.status === 407));
    if (challenged) {
      // The carrier's account, not the callee: its other gateways would refuse the same.
      refused.add(attempt.carrier.name);
      this.options.log.warn(
        { carrier: attempt.carrier.name, gateway: attempt.where, status: failure.status },
        attempt.credentials
          ? `carrier ${attempt.carrier.name} refused our credentials (${failure.status}): check its username and password`
          : `carrier ${attempt.carrier.name} asks for credentials (${failure.status}) and has none`,
      );
      return {
        next: true,
        end: {
          cause: hangupCause('sip_auth_failed'),
          source: 'Service',
          status: 'failed',
          reason: describe(failure),
        },
      };
    }
    // A timeout is the gateway's silence, not an unanswered challenge (challenges are above).
    const end = endOfFailedInvite(failure, false);
    const status = failure.kind === 'rejected' ? failure.status : null;
    const carrierTrouble = status === null || status === 408 || (status >= 500 && status < 600);
    // RFC 3261 16.7: after a 6xx "no further forking"; a 4xx is the callee's own answer.
    return carrierTrouble
      ? { next: true, end: { ...end, source: 'Service' } }
      : { next: false, end };
  }
}

function describe(failure: InviteFailure | string): string {
  if (typeof failure === 'string') return failure;
  switch (failure.kind) {
    case 'timeout':
      return 'no final response';
    case 'transport':
      return `unreachable: ${failure.error.message}`;
    default:
      return `${failure.status} ${failure.reason}`;
  }
}
