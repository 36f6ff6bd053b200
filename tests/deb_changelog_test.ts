// The package's release comes from deploy/deb/changelog
// (deploy/deb/changelog.ts): its version must be the agent's, and its date
// is every packaged file's time, so a malformed entry must stop the build
// with the line it is on.

import assert from "node:assert/strict";
import { newestRelease } from "../deploy/deb/changelog.ts";
import { packageRelease } from "../deploy/deb/build.ts";
import { ARCHES } from "../deploy/deb/layout.ts";
import { integrityOf } from "../deploy/deb/runtime.ts";

const ENTRY = [
  "dpu-traceback (0.2.0) unstable; urgency=medium",
  "",
  "  * A change.",
  "",
  " -- A Maintainer <a@example.org>  Tue, 01 Dec 2026 12:30:00 +0100",
  "",
  "dpu-traceback (0.1.0) unstable; urgency=medium",
  "",
  "  * The first.",
  "",
  " -- B <b@example.org>  Fri, 27 Nov 2026 18:00:00 +0000",
  "",
].join("\n");

Deno.test("the newest changelog entry gives the version, maintainer and date (its zone applied)", () => {
  assert.deepEqual(newestRelease(ENTRY), {
    version: "0.2.0",
    maintainer: "A Maintainer <a@example.org>",
    epochSeconds: Date.UTC(2026, 11, 1, 11, 30) / 1000,
  });
});

Deno.test("the repository's changelog is the agent's version, by the package's maintainer", async () => {
  const release = await packageRelease();
  const json = JSON.parse(
    await Deno.readTextFile(new URL("../deno.json", import.meta.url)),
  );
  assert.equal(release.version, json.version);
  assert.match(release.maintainer, /^[^<>]+ <[^<>@\s]+@[^<>\s]+>$/);
  assert.ok(release.epochSeconds <= Date.now() / 1000, "dated in the future");
});

Deno.test("a malformed changelog is refused with the line that is wrong", () => {
  const lines = ENTRY.split("\n");
  const cases: [string, RegExp][] = [
    ["", /^changelog line 1 must read "dpu-traceback \(VERSION\)/],
    [
      ENTRY.replace("dpu-traceback (0.2.0)", "other (0.2.0)"),
      /^changelog line 1 must read .*got "other \(0\.2\.0\)/,
    ],
    [
      lines.slice(0, 4).join("\n"),
      /^changelog: the first entry has no ' -- NAME <ADDRESS> {2}DATE' line$/,
    ],
    [
      ENTRY.replace(" <a@example.org>  Tue", " <a@example.org> Tue"),
      /^changelog line 5 must read " -- NAME <ADDRESS> {2}DATE"/,
    ],
    [
      ENTRY.replace("Tue, 01 Dec 2026 12:30:00 +0100", "2026-12-01"),
      /^changelog line 5: the date must be RFC 2822 .*got "2026-12-01"$/,
    ],
    [
      ENTRY.replace("Tue, 01 Dec 2026", "Tue, 41 Dec 2026"),
      /^changelog line 5: the date must be RFC 2822/,
    ],
  ];
  for (const [text, message] of cases) {
    assert.throws(
      () => newestRelease(text),
      { message },
      JSON.stringify(text),
    );
  }
});

Deno.test("the pinned Deno runtimes are SHA-512 integrities, as npm writes them", () => {
  for (const { integrity } of Object.values(ARCHES)) {
    assert.match(integrity, /^sha512-[A-Za-z0-9+/]{86}==$/);
  }
  assert.equal(
    integrityOf(new TextEncoder().encode("abc")),
    "sha512-3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw==",
  );
});
