/**
 * The agent's recent events in shared memory: what the sampling thread
 * writes at every rule start and end, and what the threads a remote party
 * drives (the metrics endpoint's `/api/v1/events`, the Alertmanager
 * sender) read, without either side ever waiting for the other.
 *
 * Two regions, both in one SharedArrayBuffer of 32-bit words, every
 * access an `Atomics` operation:
 *
 * - **per rule**, never overwritten by other rules: the open event (if
 *   any) and the last ended one. Alerts need exactly this, however many
 *   other events happened since.
 * - **a ring of the last `capacity` events** by start, newest
 *   overwriting oldest, for the event list.
 *
 * Each record has its own version word, odd while the writer changes it
 * (a sequence lock per record): a reader copies a record and keeps it only
 * if the version was even and unchanged around the copy, else retries. The
 * writer never waits and never allocates.
 *
 * One more header word counts changes (an event started or ended): the
 * writer adds 1 to it and `Atomics.notify`s it, so a reader can sleep
 * until the journal changes ({@linkcode EventJournal.changed}) instead of
 * looking on a timer.
 *
 * @module
 */

// Header words. Ids are float64 over two words: a rule flapping every
// sample at 10 kHz would pass 2^31 events in under three days.
const HEADER_VERSION = 0; // sequence lock of the newest id
const NEWEST_ID = 1; // float64: events started so far (ids are 1, 2, ...)
const CAPACITY = 3;
const RULES = 4;
const CHANGES = 5; // moves at every start and end; waiters are notified
const HEADER = 6;

// Words of one event record (ring slot, or a rule's open or last event).
const VERSION = 0;
const ID = 1; // float64; 0: no event
const MONITOR = 3;
const RULE = 4;
const START_LO = 5; // start sample's timestamp, ns since the Unix epoch
const START_HI = 6;
const END_LO = 7; // end sample's timestamp (0, 0 while open)
const END_HI = 8;
const START_SAMPLE = 9; // float64: the monitor's sample number
const END_SAMPLE = 11; // float64; -1 while open
const PEAK = 13; // float64; NaN while open (read the rule's live peak)
const START_MS = 15; // float64: the start marker's wall-clock time, ms
const END_MS = 17; // float64: the end marker's; NaN while open
const VALUE = 19; // float64: what the rule measured on the start sample
const LOST = 21; // float64: samples lost shortly before the start (0: none)
const LOSS_BACK = 23; // samples from that loss to the start sample; -1: none
const RECORD = 24;

// A reader's tries at a record the writer keeps changing.
const MAX_READ_TRIES = 10_000;

// Per rule: its open event, then its last ended event.
const RULE_RECORDS = 2;

/** One event as a reader sees it. */
export interface JournalEvent {
  /** 1, 2, ... in start order, for this run of the agent. */
  readonly id: number;
  /** Index of the monitor in the agent's monitors. */
  readonly monitor: number;
  /** Index of the rule in its monitor's rules. */
  readonly rule: number;
  /** The start sample's timestamp, ns since the Unix epoch (exact). */
  readonly startNs: bigint;
  /** The end sample's timestamp; undefined while the event is open. */
  readonly endNs: bigint | undefined;
  /** The monitor's sample number (1-based) of the start sample. */
  readonly startSample: number;
  /** Of the end sample; undefined while open. */
  readonly endSample: number | undefined;
  /**
   * The rule's peak over the event once it ended; NaN while open (the
   * rule's live peak is in the published state).
   */
  readonly peak: number;
  /** Wall-clock time of the start marker in events.log, Unix ms. */
  readonly startMs: number;
  /** Of the end marker; NaN while open. */
  readonly endMs: number;
  /**
   * What the rule measured on the start sample (the value that started
   * the event, in the rule's `peak` units); NaN when not known.
   */
  readonly value: number;
  /**
   * Samples the source lost within the rule's history depth before the
   * start sample (the newest such loss; 0 when none): the agent or the
   * device stalled just before the event began. The reference's types
   * compare across such a loss (signal rules do not), so their event may
   * be the loss's doing.
   */
  readonly lostBefore: number;
  /**
   * How many samples before the start sample that loss fell (0: right
   * before it); -1 when {@linkcode lostBefore} is 0.
   */
  readonly lossBack: number;
}

/** Where the writer learns an event's start or end sample. */
export interface JournalSample {
  /** The ring's storage, as {@linkcode SampleSink.words}. */
  readonly words: Uint32Array;
  /** Word offset of the sample's record (its timestamp first). */
  readonly at: number;
  /** The monitor's sample number of that record (1-based). */
  readonly sample: number;
}

/**
 * The shared journal of events. One side (the sampler) calls
 * {@linkcode EventJournal.started} and {@linkcode EventJournal.ended};
 * any number of other threads build their own `EventJournal` over the
 * same {@linkcode EventJournal.buffer} and read.
 *
 * @example One rule starts and ends; a reader on another "thread" sees both
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventJournal } from "./event_journal.ts";
 *
 * const writer = EventJournal.create([1], 8); // one monitor with one rule
 * const reader = new EventJournal(writer.buffer); // in a worker, say
 * const words = new Uint32Array([5000, 0, 42, 0]); // a record: timestamp, value
 * const id = writer.started(0, 0, words, 0, 10, 1_700_000_000_000, 42);
 * assert.equal(reader.open(0, 0)?.id, id);
 * assert.equal(reader.open(0, 0)?.value, 42);
 * words[0] = 9000;
 * writer.ended(0, 0, words, 0, 50, 2_000_000, 1_700_000_000_004);
 * assert.equal(reader.open(0, 0), undefined);
 * const last = reader.last(0, 0)!;
 * assert.deepEqual(
 *   [last.startNs, last.endNs, last.startSample, last.endSample, last.peak],
 *   [5000n, 9000n, 10, 50, 2_000_000],
 * );
 * assert.deepEqual(reader.recent().map((e) => e.id), [id]);
 * ```
 */
export class EventJournal {
  /** The shared memory; pass it to a reader's constructor. */
  readonly buffer: SharedArrayBuffer;
  /** Events the ring keeps. */
  readonly capacity: number;
  readonly #words: Int32Array;
  // Per monitor, where its rules' records begin (in rules).
  readonly #ruleBase: Int32Array;
  // Float64 <-> two int32 words, without allocating.
  readonly #f64 = new Float64Array(1);
  readonly #i32 = new Int32Array(this.#f64.buffer);
  // The writer's count of events started (only the writer uses it).
  readonly #count = new Float64Array(1);

  /**
   * A journal for monitors with the given rule counts, keeping the last
   * `capacity` events (default 1024) in its ring.
   */
  static create(
    rulesPerMonitor: readonly number[],
    capacity = 1024,
  ): EventJournal {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(
        `Cannot create event journal: capacity must be an integer >= 1, got ${capacity}`,
      );
    }
    const rules = rulesPerMonitor.reduce((a, b) => a + b, 0);
    const words = HEADER + 1 + rulesPerMonitor.length +
      RECORD * (capacity + RULE_RECORDS * rules);
    const buffer = new SharedArrayBuffer(4 * words);
    const header = new Int32Array(buffer);
    header[CAPACITY] = capacity;
    header[RULES] = rules;
    // The monitor table: its length, then each monitor's first rule.
    header[HEADER] = rulesPerMonitor.length;
    let first = 0;
    rulesPerMonitor.forEach((n, m) => {
      header[HEADER + 1 + m] = first;
      first += n;
    });
    return new EventJournal(buffer);
  }

  /** A view of a journal made by {@linkcode EventJournal.create}. */
  constructor(buffer: SharedArrayBuffer) {
    this.buffer = buffer;
    this.#words = new Int32Array(buffer);
    this.capacity = Atomics.load(this.#words, CAPACITY);
    const monitors = Atomics.load(this.#words, HEADER);
    this.#ruleBase = new Int32Array(monitors);
    for (let m = 0; m < monitors; m++) {
      this.#ruleBase[m] = Atomics.load(this.#words, HEADER + 1 + m);
    }
  }

  /** Events started since the journal was made; the newest has this id. */
  get newestId(): number {
    const w = this.#words;
    for (;;) {
      const before = Atomics.load(w, HEADER_VERSION);
      if ((before & 1) !== 0) continue;
      this.#i32[0] = Atomics.load(w, NEWEST_ID);
      this.#i32[1] = Atomics.load(w, NEWEST_ID + 1);
      if (Atomics.load(w, HEADER_VERSION) === before) return this.#f64[0];
    }
  }

  /**
   * Records that rule `rule` of monitor `monitor` started on the sample at
   * `words[at]` (sample number `sample`), its marker written at wall time
   * `unixMs`, the rule having measured `value` on that sample (NaN when
   * not known), `lost` samples having been lost `lossBack` samples before
   * it (see {@linkcode JournalEvent.lostBefore}). Returns the event's id.
   * Allocates nothing.
   */
  started(
    monitor: number,
    rule: number,
    words: Uint32Array,
    at: number,
    sample: number,
    unixMs: number,
    value = NaN,
    lost = 0,
    lossBack = -1,
  ): number {
    // An index out of range would mark another record as being written
    // for ever, and readers would wait on it: refuse it (integer compares).
    if (!this.#hasRule(monitor, rule)) return 0;
    const id = ++this.#count[0];
    const open = this.#ruleRecord(monitor, rule, 0);
    const slot = this.#ringRecord(id);
    const known = lost > 0;
    const l = known ? lost : 0;
    const b = known ? lossBack : -1;
    this.#write(
      open,
      id,
      monitor,
      rule,
      words,
      at,
      sample,
      unixMs,
      value,
      l,
      b,
    );
    this.#write(
      slot,
      id,
      monitor,
      rule,
      words,
      at,
      sample,
      unixMs,
      value,
      l,
      b,
    );
    // Readers look for ids up to the newest: publish it last.
    Atomics.add(this.#words, HEADER_VERSION, 1);
    this.#storeFloat(NEWEST_ID, id);
    Atomics.add(this.#words, HEADER_VERSION, 1);
    this.#changed();
    return id;
  }

  /**
   * Records that the open event of that rule ended on the sample at
   * `words[at]` with the rule's `peak`; a rule with no open event is
   * ignored. Allocates nothing.
   */
  ended(
    monitor: number,
    rule: number,
    words: Uint32Array,
    at: number,
    sample: number,
    peak: number,
    unixMs: number,
  ): void {
    if (!this.#hasRule(monitor, rule)) return;
    const w = this.#words;
    const open = this.#ruleRecord(monitor, rule, 0);
    const id = this.#loadFloat(open + ID);
    if (id === 0) return;
    const last = this.#ruleRecord(monitor, rule, 1);
    // The last event becomes the open one, ended; then the open one goes.
    this.#begin(last);
    for (let k = ID; k < RECORD; k++) {
      Atomics.store(w, last + k, Atomics.load(w, open + k));
    }
    this.#setEnd(last, words, at, sample, peak, unixMs);
    this.#commit(last);
    this.#begin(open);
    this.#storeFloat(open + ID, 0);
    this.#commit(open);
    // The ring keeps the event only if nothing newer took its slot.
    const slot = this.#ringRecord(id);
    if (this.#loadFloat(slot + ID) === id) {
      this.#begin(slot);
      this.#setEnd(slot, words, at, sample, peak, unixMs);
      this.#commit(slot);
    }
    this.#changed();
  }

  /**
   * How many times the journal has changed (an event started or ended), a
   * 32-bit count that wraps: compare it for equality only. Read it before
   * looking, then {@linkcode EventJournal.changed} with it.
   */
  get changes(): number {
    return Atomics.load(this.#words, CHANGES);
  }

  /**
   * Resolves once the journal's change count is no longer `seen` (at once
   * if it already moved), or after `timeoutMs`, whichever comes first;
   * never rejects. The writer is never held: it only adds and notifies.
   *
   * @example A reader sleeps until the writer starts an event
   * ```ts
   * import assert from "node:assert/strict";
   * import { EventJournal } from "./event_journal.ts";
   *
   * const writer = EventJournal.create([1], 8);
   * const reader = new EventJournal(writer.buffer);
   * const seen = reader.changes;
   * const woken = reader.changed(seen, 60_000);
   * writer.started(0, 0, new Uint32Array([5000, 0]), 0, 1, 1_700_000_000_000);
   * await woken;
   * assert.notEqual(reader.changes, seen);
   * ```
   */
  changed(seen: number, timeoutMs: number): Promise<void> {
    const waiting = Atomics.waitAsync(
      this.#words,
      CHANGES,
      seen | 0,
      Math.max(0, timeoutMs),
    );
    if (!waiting.async) return Promise.resolve();
    // A pending waitAsync does not keep Deno's event loop alive; a timer
    // of the same length does (and ends the wait if it fires first).
    return new Promise((resolve) => {
      // setTimeout takes 0 for anything past 2^31 - 1 ms (or Infinity).
      const ms = Math.min(Math.max(0, timeoutMs), 2 ** 31 - 1);
      const timer = setTimeout(resolve, ms);
      waiting.value.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Wakes every reader waiting in {@linkcode EventJournal.changed}, as a
   * change would, though nothing changed: a reader that stops ends its
   * own wait with it. The others look and find nothing new.
   */
  wakeReaders(): void {
    Atomics.notify(this.#words, CHANGES);
  }

  // Tells the readers that wait: one add and one notify. Nothing on the JS
  // heap; the notify takes V8's waiter-list lock briefly, and when a reader
  // is waiting (at most one wake per look, looks 10 ms apart at the least)
  // posts it one native task.
  #changed(): void {
    Atomics.add(this.#words, CHANGES, 1);
    Atomics.notify(this.#words, CHANGES);
  }

  /** The rule's open event, or undefined (also for a rule it has not). */
  open(monitor: number, rule: number): JournalEvent | undefined {
    if (!this.#hasRule(monitor, rule)) return undefined;
    return this.#read(this.#ruleRecord(monitor, rule, 0));
  }

  /** The rule's last ended event, or undefined (also for a rule it has not). */
  last(monitor: number, rule: number): JournalEvent | undefined {
    if (!this.#hasRule(monitor, rule)) return undefined;
    return this.#read(this.#ruleRecord(monitor, rule, 1));
  }

  // Readers ask with indexes from elsewhere (the endpoint's view of the
  // monitors): one out of range would read another rule's records, or
  // (NaN offsets read as 0) the header, as an event.
  #hasRule(monitor: number, rule: number): boolean {
    const monitors = this.#ruleBase.length;
    if (!Number.isInteger(monitor) || monitor < 0 || monitor >= monitors) {
      return false;
    }
    const end = monitor + 1 < monitors
      ? this.#ruleBase[monitor + 1]
      : Atomics.load(this.#words, RULES);
    return Number.isInteger(rule) && rule >= 0 &&
      rule < end - this.#ruleBase[monitor];
  }

  /**
   * The events still in the ring, newest first: at most
   * {@linkcode capacity}, and only those with an id below `beforeId` when
   * given.
   */
  recent(beforeId = Infinity): JournalEvent[] {
    const newest = Math.min(this.newestId, beforeId - 1);
    const events: JournalEvent[] = [];
    for (let id = newest; id >= 1 && id > newest - this.capacity; id--) {
      const event = this.#read(this.#ringRecord(id));
      // A slot overwritten meanwhile holds a newer event: skip it.
      if (event !== undefined && event.id === id) events.push(event);
    }
    return events;
  }

  /** The event with this id if the ring still holds it. */
  event(id: number): JournalEvent | undefined {
    if (!Number.isInteger(id) || id < 1 || id > this.newestId) {
      return undefined;
    }
    const event = this.#read(this.#ringRecord(id));
    return event?.id === id ? event : undefined;
  }

  #ruleRecord(monitor: number, rule: number, which: number): number {
    const index = this.#ruleBase[monitor] + rule;
    return this.#ringStart() + RECORD *
        (this.capacity + RULE_RECORDS * index + which);
  }

  #ringRecord(id: number): number {
    return this.#ringStart() + RECORD * ((id - 1) % this.capacity);
  }

  #ringStart(): number {
    return HEADER + 1 + this.#ruleBase.length;
  }

  #begin(record: number): void {
    Atomics.add(this.#words, record + VERSION, 1); // odd: being written
  }

  #commit(record: number): void {
    Atomics.add(this.#words, record + VERSION, 1); // even: consistent
  }

  #write(
    record: number,
    id: number,
    monitor: number,
    rule: number,
    words: Uint32Array,
    at: number,
    sample: number,
    unixMs: number,
    value: number,
    lost: number,
    lossBack: number,
  ): void {
    const w = this.#words;
    this.#begin(record);
    this.#storeFloat(record + ID, id);
    Atomics.store(w, record + MONITOR, monitor);
    Atomics.store(w, record + RULE, rule);
    Atomics.store(w, record + START_LO, words[at] | 0);
    Atomics.store(w, record + START_HI, words[at + 1] | 0);
    Atomics.store(w, record + END_LO, 0);
    Atomics.store(w, record + END_HI, 0);
    this.#storeFloat(record + START_SAMPLE, sample);
    this.#storeFloat(record + END_SAMPLE, -1);
    this.#storeFloat(record + PEAK, NaN);
    this.#storeFloat(record + START_MS, unixMs);
    this.#storeFloat(record + END_MS, NaN);
    this.#storeFloat(record + VALUE, value);
    this.#storeFloat(record + LOST, lost);
    Atomics.store(w, record + LOSS_BACK, lossBack);
    this.#commit(record);
  }

  #setEnd(
    record: number,
    words: Uint32Array,
    at: number,
    sample: number,
    peak: number,
    unixMs: number,
  ): void {
    const w = this.#words;
    Atomics.store(w, record + END_LO, words[at] | 0);
    Atomics.store(w, record + END_HI, words[at + 1] | 0);
    this.#storeFloat(record + END_SAMPLE, sample);
    this.#storeFloat(record + PEAK, peak);
    this.#storeFloat(record + END_MS, unixMs);
  }

  #loadFloat(word: number): number {
    this.#i32[0] = Atomics.load(this.#words, word);
    this.#i32[1] = Atomics.load(this.#words, word + 1);
    return this.#f64[0];
  }

  #storeFloat(word: number, value: number): void {
    this.#f64[0] = value;
    Atomics.store(this.#words, word, this.#i32[0]);
    Atomics.store(this.#words, word + 1, this.#i32[1]);
  }

  // A consistent copy of a record, or undefined if it holds no event.
  // Retries while the writer is in it; the writer holds a record for a
  // few dozen stores, so this ends at once in practice. Bounded all the
  // same: a record that never settles reads as no event rather than
  // holding the endpoint or the sender for ever.
  #read(record: number): JournalEvent | undefined {
    const w = this.#words;
    const copy = new Int32Array(RECORD);
    let consistent = false;
    for (let tries = 0; tries < MAX_READ_TRIES && !consistent; tries++) {
      const before = Atomics.load(w, record + VERSION);
      if ((before & 1) === 0) {
        for (let k = ID; k < RECORD; k++) copy[k] = Atomics.load(w, record + k);
        consistent = Atomics.load(w, record + VERSION) === before;
      }
    }
    if (!consistent) return undefined;
    const float = (k: number) => {
      this.#i32[0] = copy[k];
      this.#i32[1] = copy[k + 1];
      return this.#f64[0];
    };
    const id = float(ID);
    if (id === 0) return undefined;
    const ns = (lo: number, hi: number) =>
      (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
    const endSample = float(END_SAMPLE);
    const open = endSample < 0;
    return {
      id,
      monitor: copy[MONITOR],
      rule: copy[RULE],
      startNs: ns(copy[START_LO], copy[START_HI]),
      endNs: open ? undefined : ns(copy[END_LO], copy[END_HI]),
      startSample: float(START_SAMPLE),
      endSample: open ? undefined : endSample,
      peak: float(PEAK),
      startMs: float(START_MS),
      endMs: float(END_MS),
      value: float(VALUE),
      lostBefore: float(LOST),
      lossBack: copy[LOSS_BACK],
    };
  }
}
