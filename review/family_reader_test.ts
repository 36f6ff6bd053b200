import assert from "node:assert/strict";
import { join } from "node:path";
import { Blocks } from "./blocks.ts";
import { ColumnNames } from "./columns.ts";
import { EventStore, Timeline } from "./event_store.ts";
import { FamilyReader } from "./family_reader.ts";
import { FIXTURES } from "./test_util.ts";

function reader(files: string[]) {
  const store = new EventStore();
  const r = new FamilyReader(
    { base: "nic-events.log", monitor: "nic", stem: "nic-events", files },
    {
      store,
      beforePoints: 150,
      columnNames: new ColumnNames(),
      blocks: new Blocks(),
    },
  );
  return { r, store };
}

Deno.test("a file's counts, and events carried from one file into the next", async () => {
  const { r, store } = reader([
    join(FIXTURES, "rotated", "nic-events.log.1"),
    join(FIXTURES, "rotated", "nic-events.log"),
  ]);
  const first = await r.readFile(0);
  assert.equal(store.length, 0, "the event is still open");
  assert.deepEqual([first.monitor, first.blocks, first.gzip], [
    "nic",
    1,
    false,
  ]);
  assert.equal(r.linesRead, first.lines);
  await r.readFile(1);
  r.finish();
  const [e] = new Timeline(store);
  assert.deepEqual([e.state, e.rows, e.window.startFile, e.window.endFile], [
    "ended",
    3,
    0,
    1,
  ]);
});

Deno.test("when the rest of a file is skipped, its open events stay open, their window ending with what was read", async () => {
  const { r, store } = reader([
    join(FIXTURES, "rotated", "nic-events.log.1"),
    join(FIXTURES, "rotated", "nic-events.log"),
  ]);
  await r.readFile(0);
  r.skipRest(0);
  const [e] = new Timeline(store);
  assert.equal(e.state, "open");
  assert.deepEqual([e.window.endFile, e.window.endLine], [1, 0]);
  // The next file starts afresh: its end finds no start.
  await r.readFile(1);
  r.finish();
  assert.equal(store.length, 2);
  assert.equal(new Timeline(store).at(1)!.startKnown, false);
});
