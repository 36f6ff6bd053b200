import assert from "node:assert/strict";
import { MAX_DURATION_S } from "../config/limits.ts";
import { parseCommand } from "./args.ts";
import { UsageError } from "./usage_error.ts";

/** The run options `extra` gives, after a rules file. */
function runOptions(...extra: string[]) {
  const command = parseCommand(["--rules", "r.json", ...extra]);
  assert.equal(command.kind, "run");
  return command.kind === "run" ? command.options : undefined;
}

/** The one-line usage error `extra` gives. */
function usageError(...extra: string[]): string {
  try {
    parseCommand(["--rules", "r.json", ...extra]);
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    assert.ok(!error.message.includes("\n"));
    return error.message;
  }
  assert.fail(`no error for ${extra.join(" ")}`);
}

Deno.test("--duration takes long runs such as 30 days", () => {
  assert.equal(runOptions("--duration", "0.3")?.durationS, 0.3);
  assert.equal(runOptions("--duration", "2592000")?.durationS, 30 * 86_400);
  assert.equal(
    runOptions("--duration", String(MAX_DURATION_S))?.durationS,
    MAX_DURATION_S,
  );
  assert.equal(runOptions("--duration", "1.")?.durationS, 1);
  assert.equal(runOptions("--duration", ".5")?.durationS, 0.5);
  assert.equal(runOptions()?.durationS, undefined);
});

Deno.test("--duration refuses what is not a real span of seconds", () => {
  for (
    const value of [
      "0",
      "-1",
      "",
      " 5",
      "NaN",
      "Infinity",
      "1e3",
      "0x10",
      "30d",
    ]
  ) {
    assert.equal(
      usageError(`--duration=${value}`),
      `--duration must be a positive number of seconds, got ${
        JSON.stringify(value)
      }`,
    );
  }
  for (const value of [String(MAX_DURATION_S + 1), "9".repeat(400)]) {
    assert.match(
      usageError("--duration", value),
      /^--duration must be at most 315360000 seconds \(ten years\); leave it out to run until stopped, got "/,
    );
  }
});

Deno.test("--metrics-window is bounded as metrics_window_s is", () => {
  assert.equal(runOptions("--metrics-window", "0.5")?.metricsWindowS, 0.5);
  assert.equal(runOptions("--metrics-window", "86400")?.metricsWindowS, 86400);
  assert.equal(
    usageError("--metrics-window", "1e-12"),
    '--metrics-window must be a positive number of seconds, got "1e-12"',
  );
  assert.equal(
    usageError("--metrics-window", "0.00000001"),
    '--metrics-window must be from 0.1 to 86400 seconds (a day), got "0.00000001"',
  );
  assert.match(
    usageError("--metrics-window", "9".repeat(400)),
    /^--metrics-window must be from 0\.1 to 86400 seconds \(a day\), got "9+…"$/,
  );
});

Deno.test("values echoed in usage errors are cut and escaped", () => {
  const huge = "x".repeat(10_000_000);
  for (
    const option of ["--duration", "--seed", "--source", "--gpu", "--listen"]
  ) {
    const message = usageError(option, huge);
    assert.ok(message.length < 300, `${option}: ${message.length}`);
    assert.match(message, /got "x+…"$/);
  }
  assert.match(
    usageError("--log-level", "\u202Eerror"),
    /got "\\u202eerror"$/,
  );
  assert.throws(() => parseCommand(["run", "-c", "r.json", huge]), {
    message: /^unexpected argument "x{100,}…"$/,
  });
});

Deno.test("a negative number after a numeric option is its value, judged by the option's own rule", () => {
  const seed =
    '--seed must be a non-negative integer, from 0 to 9007199254740991, got "-5"';
  const duration = '--duration must be a positive number of seconds, got "-1"';
  const window =
    '--metrics-window must be a positive number of seconds, got "-3"';
  for (
    const [args, message] of [
      [["--seed", "-5"], seed],
      [["--seed=-5"], seed],
      [["--duration", "-1"], duration],
      [["--duration=-1"], duration],
      [["--duration", "-.5"], duration.replace('"-1"', '"-.5"')],
      [["--metrics-window", "-3"], window],
      [["--metrics-window=-3"], window],
    ] as const
  ) {
    assert.equal(usageError(...args), message, args.join(" "));
  }
  // Words that may be options still are: the value is missing.
  assert.equal(usageError("--seed", "-q"), "--seed needs a value");
  assert.equal(usageError("--seed", "--quiet"), "--seed needs a value");
  // After --, a negative number is an argument like any other.
  assert.equal(usageError("--", "-5"), 'unexpected argument "-5"');
  assert.equal(runOptions("--seed", "5")?.seed, 5);
});

Deno.test("an empty path is refused where it is given, naming the option", () => {
  for (
    const option of [
      "--event-log",
      "--input",
      "--web-config-file",
      "--data-ids",
    ]
  ) {
    assert.equal(
      usageError(option, ""),
      `${option} must be a file path, got ""`,
    );
  }
  for (const option of ["--doca-lib-dir", "--nvml-lib-dir"]) {
    assert.equal(
      usageError(`${option}=`),
      `${option} must be a directory path, got ""`,
    );
  }
  assert.throws(() => parseCommand(["--rules", ""]), {
    name: "UsageError",
    message: '--rules must be a file path, got ""',
  });
  assert.throws(() => parseCommand(["check-config", ""]), {
    name: "UsageError",
    message: `check-config's FILE must be a file path, got ""`,
  });
  // As the config's event_log: one line.
  assert.equal(
    usageError("--event-log", "a\nb"),
    '--event-log must not contain line breaks or other control characters, got "a\\nb"',
  );
  assert.equal(runOptions("--event-log", "e.log")?.eventLog, "e.log");
});

Deno.test("--listen refuses an address no host can have", () => {
  assert.equal(
    usageError("--listen", "300.1.1.1:9477"),
    '--listen host 300.1.1.1 is not an IPv4 address: four numbers from 0 to 255 (no leading zeros), as in 127.0.0.1, got "300.1.1.1:9477"',
  );
  assert.equal(
    usageError("--listen", "[::1::2]:9477"),
    '--listen host [::1::2] is not an IPv6 address, got "[::1::2]:9477"',
  );
  assert.equal(runOptions("--listen", "10.0.0.1:0")?.listen, "10.0.0.1:0");
});
