/**
 * Where a conference room lives in a gateway of several nodes. A room is mixed on one node;
 * the node that opens it claims its name (the account's auth id and the name) for as long as
 * it is open, and a member whose call reaches another node while the claim holds is refused
 * (the document goes on, as past maxMembers) rather than meeting a second room of that name.
 */
export interface RoomClaims {
  /** Claims a room about to open here; says which node holds it when another does. */
  claim(authId: string, name: string, roomUuid: string): Promise<RoomClaim>;
  /** Gives up the claim of a room that closed here. */
  release(authId: string, name: string, roomUuid: string): Promise<void>;
}

export type RoomClaim = { held: true } | { held: false; node: string };

/** One node alone (the embedded store): every room is this node's. */
export const localRoomClaims: RoomClaims = {
  claim: () => Promise.resolve({ held: true }),
  release: () => Promise.resolve(),
};
