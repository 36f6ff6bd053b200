import { assertOversizeWritesSurvive } from "../oversize_writes.ts";

// Thirty runs: with only a Deno signal listener about 2 runs in 10 died of
// SIGXFSZ (exit 153) on a 2-core machine, so thirty catch that almost surely.
Deno.test({
  name:
    "ignoreFileSizeSignal: in thirty runs, writes failing on many threads at once fail with EFBIG and never end the process",
  ignore: Deno.build.os !== "linux",
  fn: () => assertOversizeWritesSurvive(30),
});
