import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STORE_TIMEOUT_MS, withStoreBudget, type StoreBudget } from '../state/store-deadline.js';

/**
 * How long, from its arrival, a request's store calls may wait in all. Half a second is kept
 * back from the promise (503 within STORE_TIMEOUT_MS) for a step that let a failure through
 * (the rate limiter) before the next one fails, and for the answer itself.
 */
export const REQUEST_STORE_BUDGET_MS = STORE_TIMEOUT_MS - 500;

const budgets = new WeakMap<FastifyRequest, StoreBudget>();

/**
 * Bounds the store calls of each request by one budget: several steps waiting on a silent
 * Redis one after the other (the rate limiter, authentication, the route's own reads) still
 * answer 503 within the promise. The budget is entered when the request arrives and again
 * once its body is read (a body is read in the socket's context, which loses it); it closes
 * when the request is answered.
 */
export function installStoreBudget(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const budget = { until: Date.now() + REQUEST_STORE_BUDGET_MS, open: true };
    budgets.set(request, budget);
    withStoreBudget(budget, done);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const budget = budgets.get(request);
    if (budget) withStoreBudget(budget, done);
    else done();
  });
  app.addHook('onResponse', (request: FastifyRequest, _reply: FastifyReply, done) => {
    const budget = budgets.get(request);
    if (budget) budget.open = false;
    done();
  });
}
