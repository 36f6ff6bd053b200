import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT, runMain } from "./cli_util.ts";
import { tempDir } from "./temp_dir.ts";

const GOLDEN = "tests/fixtures/golden";

// Marker times are wall-clock at the transition; everything else must match.
const MARKER_TIME = /Time: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g;

Deno.test("a replay writes events.log byte for byte as the golden file (marker times aside)", async () => {
  await using dir = await tempDir();
  const log = join(dir.path, "events.log");
  const result = await runMain([
    "--rules",
    `${GOLDEN}/rules.json`,
    "--source",
    "replay",
    "--input",
    `${GOLDEN}/capture.csv`,
    "--event-log",
    log,
    "-q",
  ]);
  assert.equal(result.code, 0, result.stderr);
  const actual = (await Deno.readTextFile(log)).replace(
    MARKER_TIME,
    "Time: <marker time>",
  );
  const expected = await Deno.readTextFile(join(ROOT, GOLDEN, "events.log"));
  assert.equal(actual, expected);
});
