/** A digit string, a SIP INFO body or a telephone-event payload that could not be read. */
export class DtmfParseError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'DtmfParseError';
  }
}
