import assert from "node:assert/strict";
import { pollOnSchedule } from "./schedule.ts";

Deno.test("a late poll is measured against when it was due, and covers the periods it missed", async () => {
  const stop = new AbortController();
  let clock = 0;
  const lateness: number[] = [];
  // Each poll moves the clock: the second poll comes 15 ms after it was
  // due (10), so it covers the period due at 20; the next is due at 30.
  const moves = [25, 30, 30];
  await pollOnSchedule({
    periodMs: 10,
    signal: stop.signal,
    now: () => clock,
    poll: (late) => {
      lateness.push(late);
      clock = moves[lateness.length - 1];
      if (lateness.length === moves.length) stop.abort();
    },
  });
  assert.deepEqual(lateness, [0, 15, 0]);
});

Deno.test("a poll that throws ends the loop and rejects with its error", async () => {
  const stop = new AbortController();
  await assert.rejects(
    pollOnSchedule({
      periodMs: 1,
      signal: stop.signal,
      now: () => 0,
      poll: () => {
        throw new RangeError("sink full");
      },
    }),
    RangeError,
  );
  // Aborted before it starts: no poll at all.
  stop.abort();
  let polled = false;
  await pollOnSchedule({
    periodMs: 1,
    signal: stop.signal,
    poll: () => {
      polled = true;
    },
  });
  assert.equal(polled, false);
});

Deno.test("with a wait of its own, the loop waits until the next due time through it, and stops while a wait is under way", async () => {
  const stop = new AbortController();
  let clock = 0;
  const waits: number[] = [];
  let polls = 0;
  const third = Promise.withResolvers<void>();
  const done = pollOnSchedule({
    periodMs: 1,
    signal: stop.signal,
    now: () => clock,
    poll: () => {
      polls++;
      clock += 0.25; // the poll takes a quarter of the period
    },
    wait: (ms) => {
      waits.push(ms);
      clock += ms;
      // The third wait is under way when the loop is stopped.
      if (waits.length === 3) {
        stop.abort();
        return third.promise;
      }
      return Promise.resolve();
    },
  });
  // The loop ends while the third wait is still pending...
  await done;
  assert.deepEqual(waits, [0.75, 0.75, 0.75]);
  // ... and that wait ending later polls no more.
  third.resolve();
  await third.promise;
  await Promise.resolve();
  assert.equal(polls, 3, "no poll after the stop");
  // A wait that rejects ends the loop with its error.
  await assert.rejects(
    pollOnSchedule({
      periodMs: 1,
      signal: new AbortController().signal,
      poll: () => {},
      wait: () => Promise.reject(new RangeError("no sleep")),
    }),
    RangeError,
  );
});
