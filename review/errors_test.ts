import assert from "node:assert/strict";
import {
  DamagedFileError,
  fileProblem,
  ioReason,
  NotAnEventsLogError,
} from "./errors.ts";

Deno.test("a file's own problems are told apart from the review's bugs", () => {
  assert.equal(
    fileProblem(new NotAnEventsLogError("line 1: not an events log")),
    "line 1: not an events log",
  );
  assert.equal(
    fileProblem(new DamagedFileError("truncated (x)")),
    "truncated (x)",
  );
  assert.equal(
    fileProblem(new Deno.errors.NotFound("open '/x'")),
    "no such file or directory",
  );
  assert.equal(
    fileProblem(new Deno.errors.PermissionDenied("x")),
    "permission denied",
  );
  // The engine's RangeErrors (a stack overflow, a string too long) and
  // any other error are bugs, never "not an events log".
  for (
    const bug of [
      new RangeError("Maximum call stack size exceeded"),
      new RangeError("Invalid string length"),
      new TypeError("x is undefined"),
    ]
  ) {
    assert.equal(fileProblem(bug), undefined, bug.message);
  }
  // Both are SyntaxErrors, with their own names.
  assert.ok(new NotAnEventsLogError("x") instanceof SyntaxError);
  assert.equal(new DamagedFileError("x").name, "DamagedFileError");
});

Deno.test("ioReason never tells the user to pass a Deno flag", () => {
  const refused = new Deno.errors.NotCapable(
    'Requires write access to "/tmp/r.html", run again with the --allow-write flag',
  );
  assert.equal(
    ioReason(refused, "write"),
    "not writable by this binary (it may write only /var/log/dpu-traceback)",
  );
  assert.match(ioReason(refused), /^not readable by this binary/);
  assert.ok(!ioReason(refused, "write").includes("--allow"));
});
