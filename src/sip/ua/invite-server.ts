import type { DialogLayer } from '../dialog/dialog-layer.js';
import { SDP } from '../dialog/session-body.js';
import { isSipUri, type SipRequest } from '../message/index.js';
import { responseTo } from '../transaction/response-to.js';
import type { ServerTransaction } from '../transaction/transaction-layer.js';
import type { TransportLayer } from '../transport/transport-layer.js';
import { IncomingInvite } from './incoming-invite.js';
import { localContact } from './local-contact.js';
import type { UserAgentCore } from './user-agent-core.js';

/**
 * Takes calls (RFC 3261 13.3): the core's INVITE handler outside dialogs. Each INVITE that
 * passes the core's checks (an SDP body, Max-Forwards above 0) and has a usable Contact
 * becomes an IncomingInvite for `onInvite`; without an owner, calls get 480.
 *
 *   server.onInvite = (invite) => {
 *     invite.delegate = { onCancelled, onConfirmed, onFailed };
 *     invite.ring(); // or invite.progress(earlySdp), invite.reject(486)
 *     const dialog = invite.answer(answerSdp);
 *     dialog.delegate = { onTerminated, onInfo, onOffer };
 *   };
 */
export class InviteServer {
  /** The owner of incoming calls (the call layer). */
  onInvite: ((invite: IncomingInvite) => void) | null = null;

  constructor(
    private readonly stack: { readonly core: UserAgentCore; readonly transport: TransportLayer },
    private readonly dialogs: DialogLayer,
    private readonly onWarning?: (message: string) => void,
  ) {
    stack.core.handle('INVITE', (request, transaction) => this.receive(request, transaction), {
      accepts: [SDP],
      forwarded: true,
    });
  }

  private receive(request: SipRequest, transaction: ServerTransaction): void {
    const fault = contactFault(request);
    if (fault) {
      transaction.respond(responseTo(request, 400, { reason: fault }));
      return;
    }
    const owner = this.onInvite;
    if (!owner) {
      transaction.respond(responseTo(request, 480));
      return;
    }
    const contact = localContact(
      this.stack.transport,
      transaction.flow.protocol,
      null,
      request.requestUri().scheme === 'sips',
    );
    const invite = new IncomingInvite(request, transaction, this.dialogs, contact);
    try {
      owner(invite);
    } catch (error) {
      this.onWarning?.(`the INVITE owner threw: ${(error as Error).message}`);
      if (invite.state === 'received' || invite.state === 'early') invite.reject(500);
    }
  }
}

/** RFC 3261 8.1.1.8: an INVITE "MUST contain exactly one SIP or SIPS URI" in Contact. */
function contactFault(request: SipRequest): string | null {
  let contacts;
  try {
    contacts = request.contact();
  } catch {
    return 'Malformed Contact header';
  }
  if (contacts === '*' || contacts.length !== 1 || !isSipUri(contacts[0]!.uri)) {
    return 'Expected one SIP URI in Contact';
  }
  return null;
}
