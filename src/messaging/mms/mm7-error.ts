/**
 * The one error the MM7 readers throw, here on its own so that the MIME and XML readers, and
 * the codec above them, can all throw it without importing one another.
 */

/** An MM7 message that could not be read; the message says what is wrong with it. */
export class Mm7Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Mm7Error';
  }
}
