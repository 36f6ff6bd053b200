import assert from "node:assert/strict";
import { parseLabelsFile, readLabelsFile } from "./labels_file.ts";
import { MAX_LABELS_FILE_BYTES } from "./limits.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { settles } from "../tests/until.ts";

const FILE = "/etc/dpu-traceback/level_labels.ini";

/** The message `parseLabelsFile(text)` throws, checking its class. */
function refusal(text: string, name: string | null = "TypeError"): string {
  try {
    parseLabelsFile(text, FILE);
  } catch (error) {
    assert.ok(error instanceof Error);
    if (name !== null) assert.equal(error.name, name, error.message);
    assert.ok(!/[\r\n]/.test(error.message), "one line");
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(text)}`);
}

Deno.test("parseLabelsFile() reads key=value lines, comments, sections and quotes", () => {
  const text = [
    "; rendered per DPU",
    "# by the provisioning system",
    "",
    "[topology]",
    "rack=r12",
    "  rail = 3  ",
    "plane\t=\ta",
    "[switch]",
    'switch = "leaf-12"',
    'switch_port = " Ethernet12 "',
    'note = "say \\"hi\\""',
    "url = http://x/?a=b#frag",
    "   ",
  ].join("\n");
  assert.deepEqual(parseLabelsFile(text, FILE), {
    rack: "r12",
    rail: "3",
    plane: "a",
    switch: "leaf-12",
    // Quotes keep the spaces inside them.
    switch_port: " Ethernet12 ",
    // No escapes: the text between the outer quotes, as is.
    note: 'say \\"hi\\"',
    // The first = splits; # after a value is part of it.
    url: "http://x/?a=b#frag",
  });
  assert.deepEqual(parseLabelsFile("", FILE), {});
});

Deno.test("parseLabelsFile() takes CRLF line ends and a byte order mark", () => {
  assert.deepEqual(
    parseLabelsFile('\uFEFF[a]\r\nrack = r12\r\nrail="3"\r\n', FILE),
    { rack: "r12", rail: "3" },
  );
});

Deno.test("parseLabelsFile() refuses each bad line with its number", () => {
  const cases: [string, string, string?][] = [
    ["rack r12\n", "line 1 is not key=value"],
    ["# ok\n\nrack r12\n", "line 3 is not key=value"],
    ["[topology\nrack=r12\n", "line 1 starts with [ but is not a [section]"],
    ["=r12\n", "line 1 has no key before ="],
    [
      "rack-id = r12\n",
      "line 1: the key is not a label name: letters, digits and _, not starting with a digit",
    ],
    [
      "__meta = x\n",
      "line 1: the key starts with __, which Prometheus keeps for its own labels; choose another name",
    ],
    [
      "severity = critical\n",
      `line 1: the key is a label the agent sets itself (the rule's severity on alerts); choose another name`,
    ],
    [
      "rack =\n",
      "line 1: the value must not be empty: Prometheus and Alertmanager treat an empty label as no label (leave it out instead)",
    ],
    [
      'rack = ""\n',
      "line 1: the value must not be empty: Prometheus and Alertmanager treat an empty label as no label (leave it out instead)",
    ],
    ['rack = "r12\n', 'line 1: the value has an unclosed "'],
    ['rack = "\n', 'line 1: the value has an unclosed "'],
    [
      "rack = r\u202E21\n",
      "line 1: the value contains U+202E (a bidi override) at index 1; a label value must be one line of printable text",
    ],
    [
      "rack = r1\r2\n",
      "line 1: the value contains U+000D (a line break) at index 2; a label value must be one line of printable text",
    ],
    [
      `rack = ${"v".repeat(129)}\n`,
      "line 1: the value is longer than 128 characters",
      "RangeError",
    ],
    [
      `${"k".repeat(65)} = v\n`,
      "line 1: the key is longer than 64 characters",
      "RangeError",
    ],
    [
      "[a]\nrack = r1\n[b]\nrack = r2\n",
      "line 4: the key is already set on line 2; give each key once (sections do not separate keys)",
    ],
    [
      "rack = r1\nrack = r1\n",
      "line 2: the key is already set on line 1; give each key once (sections do not separate keys)",
    ],
    [
      "rack = r1\nrail = 3\0\n",
      "line 2 contains a NUL character; a labels file is text",
    ],
    [
      "# \0 in a comment\n",
      "line 1 contains a NUL character; a labels file is text",
    ],
    [
      Array.from({ length: 11 }, (_, i) => `l${i} = x`).join("\n"),
      "line 11: has 11 topology labels; at most 10, so that alerts (which add alertname, rule, monitor, device, instance and severity) stay under 20 labels",
      "RangeError",
    ],
  ];
  for (const [text, what, name] of cases) {
    assert.equal(
      refusal(text, name),
      `Cannot read labels file ${FILE}: ${what}`,
      JSON.stringify(text),
    );
  }
});

Deno.test("parseLabelsFile() never quotes the file: a secret pointed at by mistake stays out of the log", () => {
  // Each line is wrong in its own way; none may show up in the message.
  const secret = "s3cr3tTOKEN";
  const cases = [
    // /etc/shadow
    `root:$6$${secret}$abc:19000:0:99999:7:::\n`,
    // A base64 token ends in =: a key, an empty value.
    `${secret}=\n`,
    `[${secret}\n`,
    `=${secret}\n`,
    `${secret}-x = v\n`,
    `__${secret} = v\n`,
    `${secret.repeat(10)} = v\n`,
    `password = "${secret}\n`,
    `password = ${secret}\u202e\n`,
    `password = ${secret.repeat(20)}\n`,
    `${secret} = 1\n${secret} = 2\n`,
    `\u001b[31m${secret}\n`,
    `${secret}\0\n`,
  ];
  for (const text of cases) {
    const message = refusal(text, null);
    assert.ok(!message.includes(secret), message);
    assert.ok(!message.includes("\u001b"), message);
    assert.match(message, /^Cannot read labels file \S+: line \d/);
  }
});

Deno.test("readLabelsFile() reads a file, and refuses what is not one within 64 KiB", async () => {
  await using dir = await tempDir();
  const ok = `${dir.path}/level_labels.ini`;
  await Deno.writeTextFile(ok, '[dpu]\r\nrack = r12\r\nrail = "3"\r\n');
  assert.deepEqual(await readLabelsFile(ok), { rack: "r12", rail: "3" });

  const big = `${dir.path}/big.ini`;
  await Deno.writeFile(big, new Uint8Array(1024 * 1024).fill(0x23));
  await assert.rejects(readLabelsFile(big), {
    name: "RangeError",
    message:
      `Cannot read labels file ${big}: is larger than 64 KiB (${MAX_LABELS_FILE_BYTES} bytes), the most a labels file may be`,
  });

  // Just within the bound: comments up to 64 KiB, then one label.
  const edge = `${dir.path}/edge.ini`;
  const tail = "rack=r1\n";
  await Deno.writeTextFile(
    edge,
    "#".repeat(MAX_LABELS_FILE_BYTES - tail.length - 1) + "\n" + tail,
  );
  assert.deepEqual(await readLabelsFile(edge), { rack: "r1" });

  const binary = `${dir.path}/binary.ini`;
  await Deno.writeFile(binary, new Uint8Array([0x72, 0x3d, 0xff, 0x0a]));
  await assert.rejects(readLabelsFile(binary), {
    name: "TypeError",
    message:
      `Cannot read labels file ${binary}: is not UTF-8 text: the character at byte 2 (line 1, column 3) is not valid UTF-8`,
  });

  await assert.rejects(readLabelsFile(`${dir.path}/none.ini`), {
    name: "NotFound",
    message: `Cannot read labels file ${dir.path}/none.ini: file not found`,
  });
  // Only a regular file is read: a FIFO would hang the start, a device
  // never end.
  const fifo = `${dir.path}/fifo.ini`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.equal(made.code, 0);
  const kinds: [string, string][] = [
    [dir.path, "a directory"],
    [fifo, "a FIFO"],
    ["/dev/zero", "a character device"],
  ];
  for (const [path, kind] of kinds) {
    await assert.rejects(settles(path, readLabelsFile(path)), {
      name: "TypeError",
      message:
        `Cannot read labels file ${path}: is ${kind}, not a regular file`,
    });
  }
});
