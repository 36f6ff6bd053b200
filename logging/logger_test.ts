import assert from "node:assert/strict";
import { fstatSync } from "node:fs";
import { Logger, underJournald, writeQuietly } from "./logger.ts";

function capture(
  options: {
    level?: "error" | "warning" | "info" | "debug";
    journald?: boolean;
  },
) {
  const lines: string[] = [];
  const logger = new Logger({
    program: "dpu-traceback",
    write: (l) => lines.push(l),
    ...options,
  });
  logger.error("e");
  logger.warn("w");
  logger.info("i");
  logger.debug("d");
  return lines;
}

Deno.test("Logger: the level drops what is less severe", () => {
  assert.deepEqual(capture({ level: "error" }), ["dpu-traceback: e"]);
  assert.deepEqual(capture({ level: "warning" }), [
    "dpu-traceback: e",
    "dpu-traceback: warning: w",
  ]);
  assert.deepEqual(capture({}), [
    "dpu-traceback: e",
    "dpu-traceback: warning: w",
    "dpu-traceback: i",
  ]);
  assert.deepEqual(
    capture({ level: "debug" }).at(-1),
    "dpu-traceback: debug: d",
  );
});

Deno.test("Logger: journald lines carry syslog priorities and no program name", () => {
  assert.deepEqual(capture({ journald: true, level: "debug" }), [
    "<3>e",
    "<4>w",
    "<6>i",
    "<7>d",
  ]);
});

Deno.test("Logger: a message with line breaks stays one line", () => {
  const lines: string[] = [];
  new Logger({ program: "p", write: (l) => lines.push(l) }).error(
    "Cannot start:\n  first\nsecond",
  );
  assert.deepEqual(lines, ["p: Cannot start: first second"]);
});

Deno.test("underJournald: only when JOURNAL_STREAM names stderr itself", () => {
  const stat = fstatSync(2);
  assert.equal(underJournald(`${stat.dev}:${stat.ino}`), true);
  assert.equal(underJournald(`${stat.dev}:${stat.ino + 1}`), false);
  assert.equal(underJournald("garbage"), false);
  assert.equal(underJournald(undefined), false);
});

Deno.test("failed() writes the message, and the stack with its causes only at debug", () => {
  const cause = new RangeError("inner");
  const error = new Error("outer", { cause });
  const quiet: string[] = [];
  new Logger({ program: "p", write: (l) => quiet.push(l) }).failed(error);
  assert.deepEqual(quiet, ["p: outer"]);
  const loud: string[] = [];
  new Logger({ program: "p", level: "debug", write: (l) => loud.push(l) })
    .failed(error);
  assert.equal(loud[0], "p: outer");
  assert.match(loud[1], /^p: debug: Error: outer$/);
  assert.ok(loud.some((l) => /^p: debug: +at /.test(l)), loud.join("\n"));
  assert.ok(
    loud.some((l) => l === "p: debug: caused by: RangeError: inner"),
    loud.join("\n"),
  );
  const thrown: string[] = [];
  new Logger({ program: "p", level: "debug", write: (l) => thrown.push(l) })
    .failed("a string");
  assert.deepEqual(thrown, ["p: a string"]);
});

Deno.test("failed() tells each error of a looping cause chain once", () => {
  const a = new Error("a");
  const b = new Error("b", { cause: a });
  (a as { cause?: unknown }).cause = b;
  const lines: string[] = [];
  new Logger({ program: "p", level: "debug", write: (l) => lines.push(l) })
    .failed(a);
  assert.equal(lines.filter((l) => l === "p: debug: Error: a").length, 1);
  assert.equal(
    lines.filter((l) => l === "p: debug: caused by: Error: b").length,
    1,
  );
});

Deno.test("writeQuietly gives up on a writer that takes nothing instead of looping", () => {
  let calls = 0;
  const stuck = {
    writeSync(): number {
      calls++;
      return 0;
    },
  };
  assert.equal(writeQuietly(stuck, "a line\n"), false);
  assert.equal(calls, 1);
});
