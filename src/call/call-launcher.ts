import type { OutboundCallRequest } from './outbound-request.js';

/** The account a call is placed for, as the API authenticated it. */
export interface CallOwner {
  /** The account that made the request (a main account or one of its subaccounts). */
  authId: string;
  /** The main account that owns it. */
  tenant: string;
  isMain: boolean;
}

/**
 * Places the calls of a validated create-call request. It answers once the request is accepted
 * (the calls are dialled afterwards, and report through the request's callbacks); a refusal is
 * thrown as an ApiError so the client hears why.
 */
export interface CallLauncher {
  fire(
    owner: CallOwner,
    request: OutboundCallRequest,
    sourceIp: string,
  ): Promise<{ requestUuid: string }>;
}
