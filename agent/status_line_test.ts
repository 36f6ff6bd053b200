import assert from "node:assert/strict";
import { startStatusLine } from "./status_line.ts";
import type { Monitor } from "../rules/monitor.ts";

Deno.test("the status line is redrawn in place each second and cleared on stop", async () => {
  const monitor = {
    name: "nic",
    samples: 0,
    activeRules: 1,
    events: 2,
  } as unknown as Monitor;
  const writes: string[] = [];
  const status = startStatusLine([monitor], (text) => writes.push(text));
  (monitor as { samples: number }).samples = 10_000;
  await new Promise((resolve) => setTimeout(resolve, 1100));
  status.stop();
  assert.equal(writes.length, 2, writes.join("|"));
  // Carriage return and "erase line", then the line itself.
  assert.ok(writes[0].startsWith("\r\x1b[2K"), JSON.stringify(writes[0]));
  assert.match(
    writes[0].slice(5),
    /^ +1 s {2}nic: \d+ samples\/s, 1 active, 2 events$/,
  );
  assert.equal(writes[1], "\r\x1b[2K");
});
