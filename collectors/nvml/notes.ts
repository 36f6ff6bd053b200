/**
 * What the poller has to tell an operator: a reading not supported, a
 * call or a GPU given up on. Each is said once, when it happens; notes
 * gather between polls until the worker takes them and posts them to the
 * host.
 *
 * @module
 */

/** Something an operator should hear about, said once. */
export interface PollerNote {
  readonly level: "info" | "warning";
  readonly message: string;
  /** Set when the note is that this GPU went down. */
  readonly downGpu?: number;
}

const NO_NOTES: readonly PollerNote[] = Object.freeze([]);

/** The notes gathered since they were last taken. */
export class PollerNotes {
  #notes: PollerNote[] = [];

  /** Adds `note`, to be handed over by the next {@linkcode take}. */
  push(note: PollerNote): void {
    this.#notes.push(note);
  }

  /** The notes gathered since the last call, oldest first. */
  take(): readonly PollerNote[] {
    // Most polls have nothing to say: hand back one shared empty list.
    if (this.#notes.length === 0) return NO_NOTES;
    const notes = this.#notes;
    this.#notes = [];
    return notes;
  }
}
