import assert from "node:assert/strict";
import { EventJournal, type JournalEvent } from "./event_journal.ts";

// A record of the monitor's ring: timestamp (lo, hi) then one column.
function sample(ns: bigint): Uint32Array {
  return new Uint32Array([
    Number(ns & 0xffff_ffffn),
    Number(ns >> 32n),
    0,
    0,
  ]);
}

// Event k's figures, derived from k so that any mix of two events (a torn
// record) shows: start k µs past 2^32 * k ns, end 500 ns later.
function startOf(k: number): Uint32Array {
  return sample((BigInt(k) << 32n) + BigInt(k) * 1000n);
}
function endOf(k: number): Uint32Array {
  return sample((BigInt(k) << 32n) + BigInt(k) * 1000n + 500n);
}

Deno.test("a start and an end are recorded with their samples, times and peak", () => {
  const journal = EventJournal.create([2, 1]);
  assert.equal(journal.newestId, 0);
  assert.equal(journal.open(1, 0), undefined);
  assert.equal(journal.last(1, 0), undefined);
  const id = journal.started(
    1,
    0,
    startOf(7),
    0,
    70,
    1_700_000_000_123,
    312_004.5,
  );
  assert.equal(id, 1);
  assert.equal(journal.newestId, 1);
  const open = journal.open(1, 0)!;
  assert.deepEqual(
    { ...open, peak: String(open.peak), endMs: String(open.endMs) },
    {
      id: 1,
      monitor: 1,
      rule: 0,
      startNs: (7n << 32n) + 7000n,
      endNs: undefined,
      startSample: 70,
      endSample: undefined,
      peak: "NaN",
      startMs: 1_700_000_000_123,
      endMs: "NaN",
      value: 312_004.5,
      lostBefore: 0,
      lossBack: -1,
    },
  );
  // Other rules are untouched.
  assert.equal(journal.open(0, 0), undefined);
  assert.equal(journal.open(0, 1), undefined);
  journal.ended(1, 0, endOf(7), 0, 75, -2.5, 1_700_000_000_124);
  assert.equal(journal.open(1, 0), undefined);
  const last = journal.last(1, 0)!;
  assert.deepEqual(last, {
    id: 1,
    monitor: 1,
    rule: 0,
    startNs: (7n << 32n) + 7000n,
    endNs: (7n << 32n) + 7500n,
    startSample: 70,
    endSample: 75,
    peak: -2.5,
    startMs: 1_700_000_000_123,
    endMs: 1_700_000_000_124,
    // The start's value stays with the event once it ended.
    value: 312_004.5,
    lostBefore: 0,
    lossBack: -1,
  });
  assert.deepEqual(journal.recent(), [last]);
  assert.deepEqual(journal.event(1), last);
});

Deno.test("an event that began after lost samples says how many and how long before, also once ended", () => {
  const journal = EventJournal.create([1]);
  const id = journal.started(0, 0, startOf(3), 0, 30, 1, 5, 11_067, 3);
  assert.deepEqual(
    [journal.open(0, 0)?.lostBefore, journal.open(0, 0)?.lossBack],
    [11_067, 3],
  );
  journal.ended(0, 0, endOf(3), 0, 40, 9, 2);
  assert.deepEqual(
    [journal.event(id)?.lostBefore, journal.last(0, 0)?.lossBack],
    [11_067, 3],
  );
  // No loss: 0 and -1, whatever back is given.
  journal.started(0, 0, startOf(4), 0, 50, 3, 5, 0, 7);
  assert.deepEqual(
    [journal.open(0, 0)?.lostBefore, journal.open(0, 0)?.lossBack],
    [0, -1],
  );
});

Deno.test("an end with no open event is ignored", () => {
  const journal = EventJournal.create([1]);
  journal.ended(0, 0, endOf(1), 0, 5, 1, 1);
  assert.equal(journal.last(0, 0), undefined);
  assert.deepEqual(journal.recent(), []);
});

Deno.test("open and last are kept per rule, whatever the others do", () => {
  const journal = EventJournal.create([2, 3]);
  const a = journal.started(0, 1, startOf(1), 0, 10, 1);
  const b = journal.started(1, 2, startOf(2), 0, 20, 2);
  journal.ended(0, 1, endOf(1), 0, 15, 9, 3);
  const c = journal.started(0, 1, startOf(3), 0, 30, 4);
  assert.deepEqual([a, b, c], [1, 2, 3]);
  assert.equal(journal.open(0, 1)?.id, c);
  assert.equal(journal.last(0, 1)?.id, a);
  assert.equal(journal.open(1, 2)?.id, b);
  assert.equal(journal.last(1, 2), undefined);
  for (const [m, r] of [[0, 0], [1, 0], [1, 1]]) {
    assert.equal(journal.open(m, r), undefined);
    assert.equal(journal.last(m, r), undefined);
  }
  // Rules and monitors it has not are nobody's events.
  for (
    const [m, r] of [[0, 2], [0, 4], [1, 3], [2, 0], [-1, 0], [0, -1], [0.5, 0]]
  ) {
    assert.equal(journal.open(m, r), undefined, `open(${m}, ${r})`);
    assert.equal(journal.last(m, r), undefined, `last(${m}, ${r})`);
  }
});

Deno.test("the ring keeps the newest events, newest first, after wrapping", () => {
  const journal = EventJournal.create([1], 4);
  for (let k = 1; k <= 10; k++) {
    journal.started(0, 0, startOf(k), 0, k * 10, k);
    journal.ended(0, 0, endOf(k), 0, k * 10 + 5, k, k + 0.5);
  }
  assert.equal(journal.newestId, 10);
  const recent = journal.recent();
  assert.deepEqual(recent.map((e) => e.id), [10, 9, 8, 7]);
  for (const e of recent) {
    assert.equal(e.startNs, (BigInt(e.id) << 32n) + BigInt(e.id) * 1000n);
    assert.equal(e.endSample, e.id * 10 + 5);
    assert.equal(e.peak, e.id);
  }
  // Paging back from an id.
  assert.deepEqual(journal.recent(9).map((e) => e.id), [8, 7]);
  assert.deepEqual(journal.recent(7).map((e) => e.id), []);
  assert.deepEqual(journal.recent(1).map((e) => e.id), []);
  assert.deepEqual(journal.recent(100).map((e) => e.id), [10, 9, 8, 7]);
  // Evicted, never made, or not an id.
  assert.equal(journal.event(6), undefined);
  assert.equal(journal.event(1), undefined);
  assert.equal(journal.event(11), undefined);
  assert.equal(journal.event(0), undefined);
  assert.equal(journal.event(7.5), undefined);
  assert.equal(journal.event(7)?.endMs, 7.5);
  assert.equal(journal.last(0, 0)?.id, 10);
});

Deno.test("an event open while more than the ring's capacity come and go stays open, then last", () => {
  const journal = EventJournal.create([2], 4);
  const long = journal.started(0, 0, startOf(1), 0, 10, 1);
  for (let k = 2; k <= 12; k++) {
    journal.started(0, 1, startOf(k), 0, k * 10, k);
    journal.ended(0, 1, endOf(k), 0, k * 10 + 5, k, k);
  }
  assert.equal(journal.event(long), undefined); // gone from the ring
  assert.equal(journal.open(0, 0)?.id, long);
  assert.equal(journal.open(0, 0)?.startSample, 10);
  journal.ended(0, 0, endOf(1), 0, 999, 42, 13);
  assert.equal(journal.open(0, 0), undefined);
  const last = journal.last(0, 0)!;
  assert.deepEqual(
    [last.id, last.startSample, last.endSample, last.peak, last.endNs],
    [long, 10, 999, 42, (1n << 32n) + 1500n],
  );
  // Its ending did not touch the slot a newer event now holds.
  assert.deepEqual(journal.recent().map((e) => [e.id, e.endSample]), [
    [12, 125],
    [11, 115],
    [10, 105],
    [9, 95],
  ]);
});

Deno.test("a capacity that is not a positive integer is refused", () => {
  assert.throws(
    () => EventJournal.create([1], 0),
    new RangeError(
      "Cannot create event journal: capacity must be an integer >= 1, got 0",
    ),
  );
  assert.throws(() => EventJournal.create([1], 1.5), RangeError);
});

// Checks one event against the figures its id implies; returns what is
// wrong, or "" when nothing is.
function tornness(e: JournalEvent, rules: number): string {
  const k = e.id;
  const wrong: string[] = [];
  if (!Number.isInteger(k) || k < 1) wrong.push(`id ${k}`);
  if (e.monitor !== 0 || e.rule !== k % rules) {
    wrong.push(`monitor ${e.monitor} rule ${e.rule}`);
  }
  if (e.startNs !== (BigInt(k) << 32n) + BigInt(k) * 1000n) {
    wrong.push(`start ${e.startNs}`);
  }
  if (e.startSample !== k * 10 || e.startMs !== k || e.value !== k + 0.25) {
    wrong.push(`start sample ${e.startSample} ms ${e.startMs} ${e.value}`);
  }
  if (e.endNs === undefined) {
    if (
      e.endSample !== undefined || !Number.isNaN(e.peak) ||
      !Number.isNaN(e.endMs)
    ) wrong.push(`open with ${e.endSample} ${e.peak} ${e.endMs}`);
  } else if (
    e.endNs < e.startNs || e.endNs !== e.startNs + 500n ||
    e.endSample !== k * 10 + 5 || e.peak !== k || e.endMs !== k + 0.5
  ) {
    wrong.push(`end ${e.endNs} ${e.endSample} ${e.peak} ${e.endMs}`);
  }
  return wrong.length === 0 ? "" : `event ${k}: ${wrong.join(", ")}`;
}

Deno.test("a reader in a Worker never sees a torn record while the writer goes flat out", async () => {
  const rules = 3;
  const journal = EventJournal.create([rules], 8);
  // [0]: the reader has started; [1]: stop reading; [2]: its reads so far.
  const flags = new Int32Array(new SharedArrayBuffer(12));
  const journalUrl = new URL("./event_journal.ts", import.meta.url).href;
  const code = `
    import { EventJournal } from ${JSON.stringify(journalUrl)};
    const tornness = ${tornness.toString()};
    self.onmessage = ({ data: { buffer, flags: shared, rules } }) => {
      const journal = new EventJournal(buffer);
      const flags = new Int32Array(shared);
      let reads = 0, seen = 0, newest = 0;
      const problems = [];
      Atomics.store(flags, 0, 1);
      Atomics.notify(flags, 0);
      while (Atomics.load(flags, 1) === 0 && problems.length < 5) {
        const before = journal.newestId;
        if (before < newest) problems.push("newestId went back");
        newest = before;
        const recent = journal.recent();
        for (let i = 0; i < recent.length; i++) {
          const e = recent[i];
          const wrong = tornness(e, rules);
          if (wrong !== "") problems.push("recent: " + wrong);
          if (i > 0 && e.id >= recent[i - 1].id) problems.push("recent out of order");
        }
        seen += recent.length;
        for (let r = 0; r < rules; r++) {
          for (const e of [journal.open(0, r), journal.last(0, r)]) {
            if (e === undefined) continue;
            seen++;
            const wrong = tornness(e, rules);
            if (wrong !== "") problems.push("rule " + r + ": " + wrong);
          }
        }
        const one = journal.event(before);
        if (one !== undefined) {
          const wrong = tornness(one, rules);
          if (wrong !== "") problems.push("event: " + wrong);
        }
        reads++;
        Atomics.store(flags, 2, reads);
      }
      // Done reading (asked to, or too many problems): the writer's loop
      // must not wait for reads that will not come.
      Atomics.store(flags, 2, 0x7fffffff);
      self.postMessage({ reads, seen, problems });
    };
  `;
  const worker = new Worker(
    URL.createObjectURL(new Blob([code], { type: "text/javascript" })),
    { type: "module" },
  );
  try {
    const done = new Promise<
      { reads: number; seen: number; problems: string[] }
    >((resolve, reject) => {
      worker.onmessage = (event) => resolve(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(event.message));
      };
    });
    worker.postMessage({ buffer: journal.buffer, flags: flags.buffer, rules });
    // However long the Worker takes to load on a busy machine.
    const started = Atomics.waitAsync(flags, 0, 0);
    await Promise.race([
      started.value,
      done.then(() => assert.fail("the reader ended before it started")),
    ]);
    assert.equal(Atomics.load(flags, 0), 1, "the reader started");
    // Each event stays open over the next rules - 1 starts, so readers see
    // open events, ended ones and slots being overwritten. Written until
    // both sides have done enough, however the threads are scheduled.
    let k = 0;
    while (k <= 20_000 || Atomics.load(flags, 2) <= 200) {
      for (let n = 0; n < 1000; n++) {
        k++;
        const r = k % rules;
        const previous = k - rules;
        if (previous >= 1) {
          journal.ended(
            0,
            r,
            endOf(previous),
            0,
            previous * 10 + 5,
            previous,
            previous + 0.5,
          );
        }
        journal.started(0, r, startOf(k), 0, k * 10, k, k + 0.25);
      }
    }
    Atomics.store(flags, 1, 1);
    const { reads, seen, problems } = await done;
    assert.deepEqual(problems, []);
    assert.ok(reads > 100, `${reads} reads`);
    assert.ok(seen > 1000, `${seen} events read`);
    assert.ok(k > 10_000, `${k} events written`);
  } finally {
    worker.terminate();
  }
});

Deno.test("started and ended allocate nothing (heap probe, with a control that does)", async () => {
  // heapUsed only shows allocation between collections, so the probe runs
  // in its own process with --expose-gc: collect, run, read the growth.
  const journalUrl = new URL("./event_journal.ts", import.meta.url).href;
  const probe = `
    import { EventJournal } from ${JSON.stringify(journalUrl)};
    const journal = EventJournal.create([4], 64);
    const words = new Uint32Array([1000, 0, 5, 0]);
    // One wall time for all: computing a new one per call would box a
    // number here, in the probe, and count against the journal.
    const unixMs = 1_700_000_000_000;
    const writes = (n) => {
      for (let i = 0; i < n; i++) {
        const r = i & 3;
        journal.ended(0, r, words, 0, i, 7.5, unixMs);
        journal.started(0, r, words, 0, i, unixMs, 312_004.5);
      }
    };
    const reads = (n) => {
      for (let i = 0; i < n; i++) journal.open(0, i & 3);
    };
    const growth = (run, n) => {
      run(n); // warm up: compiled, inline caches settled
      globalThis.gc();
      const before = Deno.memoryUsage().heapUsed;
      run(n);
      return Deno.memoryUsage().heapUsed - before;
    };
    console.log(JSON.stringify({
      writes: growth(writes, 20000),
      reads: growth(reads, 2000),
    }));
  `;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--expose-gc", probe],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  const { writes, reads } = JSON.parse(
    new TextDecoder().decode(output.stdout),
  );
  // 40 000 calls: one 16-byte object each would be 640 kB; what is left
  // (about 10 kB here) is V8's own bookkeeping, not per call.
  assert.ok(writes < 65_536, `started/ended grew the heap by ${writes} bytes`);
  // The control: a read copies the record and builds an event (and its
  // BigInts), so the same probe must see it.
  assert.ok(reads > 100_000, `2000 reads grew the heap by only ${reads} bytes`);
});

Deno.test("a start with no value given records it as unknown (NaN)", () => {
  const journal = EventJournal.create([1]);
  journal.started(0, 0, startOf(1), 0, 10, 1);
  assert.ok(Number.isNaN(journal.open(0, 0)!.value));
  journal.ended(0, 0, endOf(1), 0, 15, 3, 2);
  assert.ok(Number.isNaN(journal.last(0, 0)!.value));
  // A later event's value is its own, not the last one's.
  journal.started(0, 0, startOf(2), 0, 20, 3, -0.5);
  assert.equal(journal.open(0, 0)!.value, -0.5);
  assert.ok(Number.isNaN(journal.last(0, 0)!.value));
  assert.deepEqual(journal.recent().map((e) => e.value), [-0.5, NaN]);
});

Deno.test("a start and an end move the change count and wake a reader waiting for it; an ignored end does not", async () => {
  const journal = EventJournal.create([2], 8);
  const reader = new EventJournal(journal.buffer);
  const before = reader.changes;
  // Waiting on a count already gone by returns at once.
  journal.started(0, 0, startOf(1), 0, 10, 1);
  const started = reader.changes;
  assert.notEqual(started, before);
  await reader.changed(before, 60_000);
  // A reader asleep on the count is woken by the end.
  const woken = reader.changed(started, 60_000);
  journal.ended(0, 0, endOf(1), 0, 15, 3, 2);
  await woken;
  const ended = reader.changes;
  assert.notEqual(ended, started);
  // Nothing recorded, nothing told: an end with no open event, a rule the
  // journal has not.
  journal.ended(0, 1, endOf(2), 0, 20, 3, 3);
  journal.started(1, 0, startOf(3), 0, 30, 4);
  assert.equal(reader.changes, ended);
  // wakeReaders ends a wait without a change (a reader that stops).
  const stopping = reader.changed(ended, 60_000);
  reader.wakeReaders();
  await stopping;
  assert.equal(reader.changes, ended);
});
