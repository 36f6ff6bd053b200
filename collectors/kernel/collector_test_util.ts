/**
 * A sample sink for the kernel collector's tests: keeps every record as
 * BigInts and every gap, and lets a test wait for a record it expects.
 *
 * @module
 */

import type { SampleSink } from "../../rules/sample_sink.ts";

/** What a {@linkcode RecordingSink} was given, in order. */
export type Delivery =
  | { readonly record: readonly bigint[] }
  | { readonly gap: number };

/** A sink that records what it is given. */
export class RecordingSink implements SampleSink {
  readonly words: Uint32Array;
  readonly columns: number;
  readonly deliveries: Delivery[] = [];
  #waiters: { test: (d: Delivery) => boolean; resolve: () => void }[] = [];

  constructor(columns: number) {
    this.columns = columns;
    this.words = new Uint32Array(2 * (1 + columns));
  }

  /** The records only: timestamp first, then the columns. */
  get records(): (readonly bigint[])[] {
    return this.deliveries.flatMap((d) => "record" in d ? [d.record] : []);
  }

  /** The samples reported lost, in all. */
  get lost(): number {
    return this.deliveries.reduce((n, d) => n + ("gap" in d ? d.gap : 0), 0);
  }

  claim(): number {
    return 0;
  }

  commit(): void {
    const record: bigint[] = [];
    for (let w = 0; w < this.words.length; w += 2) {
      record.push(
        (BigInt(this.words[w + 1]) << 32n) | BigInt(this.words[w]),
      );
    }
    this.#deliver({ record });
  }

  gap(dropped: number): void {
    this.#deliver({ gap: dropped });
  }

  /** Resolves with the first delivery from now on that passes `test`. */
  next(test: (d: Delivery) => boolean): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#waiters.push({ test, resolve });
    return promise;
  }

  /** Resolves at the next record delivered from now on. */
  nextRecord(
    test: (record: readonly bigint[]) => boolean = () => true,
  ): Promise<void> {
    return this.next((d) => "record" in d && test(d.record));
  }

  #deliver(delivery: Delivery): void {
    this.deliveries.push(delivery);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.test(delivery)) return true;
      w.resolve();
      return false;
    });
  }
}
