import assert from "node:assert/strict";
import { formatDecimal } from "./decimal.ts";
import { readFixtures } from "./test_util.ts";
import { readWindow } from "./window_rows.ts";

/** What readWindow hands over, as lines. */
async function visit(
  e: Parameters<typeof readWindow>[0],
): Promise<string[]> {
  const seen: string[] = [];
  await readWindow(e, {
    columns: (names) => seen.push(`columns ${names.join(" ")}`),
    row: (fields, sec, ns) =>
      seen.push(`row ${sec}.${ns} ${formatDecimal(fields[4], fields[5])}`),
    note: (n) => seen.push(`${n.kind} ${n.text.slice(0, 13)}`),
    flush: () => Promise.resolve(),
  });
  return seen;
}

Deno.test("readWindow hands over the window's column names, decoded rows and markers, in order", async () => {
  const { events } = await readFixtures(["nic-events.log"]);
  assert.deepEqual(await visit(events[0]), [
    "columns timestamp port_0_rx_bytes port_0_rx_ecn_packets",
    "columns timestamp port_0_rx_bytes port_0_rx_ecn_packets",
    "row 1795272700.0 9007199254740800",
    "row 1795272700.100000 9007199254740810",
    "row 1795272700.200000 9007199254740820",
    "row 1795272700.300000 9007199254740950",
    "marker <<Event start",
    "row 1795272700.400000 9007199254740993",
    "marker <<Gap>> Time:",
    "row 1795272700.1000000 9007199254740993",
    "row 1795272700.1100000 9007199254740993",
    "marker <<Peak>> Rule",
    "marker <<Event end>>",
  ]);
});

Deno.test("readWindow notes a new header block (a rotation) and stops an event cut by a restart before it", async () => {
  const rotated = await readFixtures(["rotated"]);
  const seen = await visit(rotated.events[0]);
  assert.equal(seen.filter((l) => l.startsWith("header ")).length, 1);
  assert.equal(seen.filter((l) => l.startsWith("row ")).length, 7);
  const { events } = await readFixtures(["nic-events.log"]);
  const cut = await visit(events[1]);
  assert.equal(cut.filter((l) => l.startsWith("row ")).length, 5);
  assert.ok(!cut.some((l) => l.startsWith("header ")));
});
