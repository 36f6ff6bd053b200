import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { parseConfig } from "./load.ts";
import { mergeLabels, resolveTopology } from "./topology.ts";
import { tempDir } from "../tests/temp_dir.ts";

const MONITORS =
  'monitors: [{ name: nic, source: sim, columns: [{ name: rx, data_id: "0x1" }] }]';

Deno.test("resolveTopology() defaults the instance to the host name", async () => {
  const config = parseConfig(`labels: { rack: r12 }\n${MONITORS}`, "a.yaml");
  assert.deepEqual(await resolveTopology(config), {
    instance: Deno.hostname(),
    labels: { rack: "r12" },
  });
});

Deno.test("resolveTopology() merges the labels file under the config's labels, sorted", async () => {
  await using dir = await tempDir();
  const file = `${dir.path}/level_labels.ini`;
  await Deno.writeTextFile(
    file,
    "[dpu]\nswitch_port = Ethernet12\nrack = r99\nrail = 3\n",
  );
  const config = parseConfig(
    `instance: dpu-r12-07\nlabels: { rack: r12, plane: a }\nlabels_file: ${file}\n${MONITORS}`,
    "a.yaml",
  );
  const topology = await resolveTopology(config);
  assert.equal(topology.instance, "dpu-r12-07");
  assert.deepEqual(Object.entries(topology.labels), [
    ["plane", "a"],
    ["rack", "r12"],
    ["rail", "3"],
    ["switch_port", "Ethernet12"],
  ]);
});

Deno.test("resolveTopology() refuses a missing or bad labels file, and more than 10 labels together", async () => {
  await using dir = await tempDir();
  const file = `${dir.path}/level_labels.ini`;
  const config = (labels: string) =>
    parseConfig(
      `instance: i\nlabels: ${labels}\nlabels_file: ${file}\n${MONITORS}`,
      "a.yaml",
    );
  await assert.rejects(resolveTopology(config("{}")), {
    name: "NotFound",
    message: `Cannot read labels file ${file}: file not found`,
  });
  await Deno.writeTextFile(file, "rack r12\n");
  await assert.rejects(resolveTopology(config("{}")), {
    name: "TypeError",
    message: `Cannot read labels file ${file}: line 1 is not key=value`,
  });
  await Deno.writeTextFile(
    file,
    Array.from({ length: 6 }, (_, i) => `f${i} = x`).join("\n"),
  );
  const five = `{ ${
    Array.from({ length: 5 }, (_, i) => `c${i}: x`).join(", ")
  } }`;
  await assert.rejects(resolveTopology(config(five)), {
    name: "RangeError",
    message:
      `Cannot read labels file ${file}: with labels: of the configuration it has 11 topology labels; at most 10, so that alerts (which add alertname, rule, monitor, device, instance and severity) stay under 20 labels`,
  });
  // The same names in both count once.
  const overlapping = `{ ${
    Array.from({ length: 4 }, (_, i) => `f${i}: y`).join(", ")
  } }`;
  assert.equal(
    Object.keys((await resolveTopology(config(overlapping))).labels).length,
    6,
  );
});

Deno.test("mergeLabels() lets the configuration win", () => {
  assert.deepEqual(
    mergeLabels({ rail: "3" }, { rail: "4", plane: "b" }, "x.ini"),
    { plane: "b", rail: "3" },
  );
  assert.deepEqual(mergeLabels({}, {}, "x.ini"), {});
});

Deno.test("resolveTopology() says what to do when the host name may not be read", async () => {
  await using dir = await tempDir();
  const script = `${dir.path}/resolve.ts`;
  await Deno.writeTextFile(
    script,
    `import { resolveTopology } from ${
      JSON.stringify(new URL("./topology.ts", import.meta.url).href)
    };
try {
  await resolveTopology({ labels: {} });
  console.log("resolved");
} catch (error) {
  console.log(error.message);
}
console.log((await resolveTopology({ labels: {}, instance: "dpu-1" })).instance);
`,
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--allow-read",
      "--config",
      fileURLToPath(new URL("../deno.json", import.meta.url)),
      script,
    ],
    cwd: new URL("..", import.meta.url),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const [refused, configured] = stdout.trimEnd().split("\n");
  assert.match(
    refused,
    /^Cannot tell the host name for the instance label \(.*--allow-sys.*\); set instance: in the configuration$/,
  );
  // A configured instance needs no host name.
  assert.equal(configured, "dpu-1");
});
