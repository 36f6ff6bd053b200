import assert from "node:assert/strict";
import { Blocks, EventContexts } from "./blocks.ts";
import { EventStore } from "./event_store.ts";
import { HeaderParser } from "./header.ts";

const header = () => {
  const p = new HeaderParser("Telemetry monitor : test");
  for (
    const line of [
      "\tData IDs: [",
      "\t\t{",
      '\t\t\tName: "rx",',
      "\t\t\tData ID: 0x1",
      "\t\t},",
      "\t]",
      "\tRules: [",
      "\t\t{",
      '\t\t\tName: "hot",',
      "\t\t\tData ID: 0x1",
      "\t\t\tComparison type: greater_than",
      "\t\t\tComparison value: 5",
      "\t\t},",
      "\t]",
    ]
  ) p.accept(line);
  return p.header();
};

Deno.test("equal header blocks are one block; rules find their columns", () => {
  const blocks = new Blocks();
  const a = blocks.get("nic", header());
  assert.equal(blocks.get("nic", header()), a);
  assert.notEqual(blocks.get("gpu", header()), a);
  assert.deepEqual(a.rules.get("hot")?.col, 1);
  assert.equal(blocks.get("nic", null).rules.size, 0);
});

Deno.test("a rule's events under one block and columns share one context", () => {
  const store = new EventStore();
  const contexts = new EventContexts(store, ["nic-events.log"]);
  const block = new Blocks().get("nic", header());
  const names = ["timestamp", "rx"];
  const a = contexts.get(block, names, "hot", "ns");
  assert.deepEqual(contexts.get(block, names, "hot", "ns"), a);
  assert.equal(a.col, 1);
  assert.notEqual(contexts.get(block, names, "hot", "counter").id, a.id);
  // Rows without the rule's column: unknown column.
  assert.equal(contexts.get(block, ["timestamp"], "hot", "ns").col, -1);
  assert.equal(contexts.get(block, names, "other", "ns").col, -1);
});
