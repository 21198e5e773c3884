import { readDialogSnapshot, type DialogSnapshot } from '../sip/dialog/dialog-snapshot.js';
import { sendSnapshotBye } from '../sip/dialog/snapshot-bye.js';
import type { DialogLayer } from '../sip/dialog/dialog-layer.js';

/**
 * A leg's SIP dialog as its node shares it with the other nodes (written into the call's live
 * entry once the leg is answered): enough to end it with a BYE, no credentials.
 */
export type LegDialog = DialogSnapshot;

/**
 * How a BYE to the peer of an orphaned dialog went: the status and reason phrase of its final
 * response, or why it had none (unreachable from here, no answer in 64*T1).
 */
export type OrphanedByeOutcome =
  { answered: true; status: number; reason: string } | { answered: false; reason: string };

/**
 * Ends dialogs whose node died, towards their SIP peers (the carrier, the phone), from this
 * node's SIP stack: without it their calls would last until the peers' own timers.
 */
export interface OrphanedDialogs {
  /**
   * Sends the BYE of a leg's dialog; resolves once it is answered, timed out, or found
   * unreachable from here (a WebSocket peer). Rejects when `dialog` is not a LegDialog.
   */
  bye(dialog: unknown): Promise<OrphanedByeOutcome>;
}

/** Orphaned dialogs ended through a node's dialog layer (SipService.dialogs). */
export function orphanedDialogsOf(dialogs: DialogLayer): OrphanedDialogs {
  return {
    bye: async (value) => {
      const snapshot = readDialogSnapshot(value);
      if (snapshot === null) throw new Error('the live entry holds no usable dialog');
      const outcome = await sendSnapshotBye(dialogs, snapshot);
      if (!outcome.answered) return outcome;
      const { status, reason } = outcome.response;
      return { answered: true, status, reason };
    },
  };
}
