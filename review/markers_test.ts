import assert from "node:assert/strict";
import {
  canonicalMarkerSecond,
  markerInstant,
  parseEventMarker,
  parseGapMarker,
  parsePeakMarker,
} from "./markers.ts";

Deno.test("event markers: kind, time as written, rule unquoted", () => {
  assert.deepEqual(
    parseEventMarker(
      '<<Event start>> Time: 2026-11-21T14:50:01Z, Rule: "say ""hi"", ok"',
    ),
    { kind: "start", time: "2026-11-21T14:50:01Z", rule: 'say "hi", ok' },
  );
  assert.equal(parseEventMarker("<<Event start>> Time: oops"), undefined);
});

Deno.test("gap markers: dropped samples and lost rows", () => {
  assert.deepEqual(
    parseGapMarker("<<Gap>> Time: 2026-11-21T14:50:01Z, Dropped samples: 5"),
    { kind: "dropped", count: 5, time: "2026-11-21T14:50:01Z" },
  );
  assert.deepEqual(
    parseGapMarker("<<Gap>> Time: 2026-11-21T14:50:01Z, Lost rows: 7 "),
    { kind: "lost", count: 7, time: "2026-11-21T14:50:01Z" },
  );
  assert.equal(parseGapMarker("<<Gap>> Time: x, Lost rows: many"), undefined);
});

Deno.test("gap markers: a blind period's own line has its span; a bad time in it is malformed", () => {
  assert.deepEqual(
    parseGapMarker(
      "<<Gap>> Time: 2026-11-21T14:50:00Z, Dropped samples: 1, From: unknown, To: 2026-11-21T14:50:00.250Z",
    )?.span,
    { from: null, to: { sec: 1795272600, ns: 250e6 }, stopped: false },
  );
  assert.deepEqual(
    parseGapMarker(
      "<<Gap>> Time: 2026-11-21T15:06:40Z, Dropped samples: 9, From: 2026-11-21T14:50:00.250Z, Stopped: 2026-11-21T15:06:40.001Z",
    )?.span,
    {
      from: { sec: 1795272600, ns: 250e6 },
      to: { sec: 1795273600, ns: 1e6 },
      stopped: true,
    },
  );
  assert.equal(
    parseGapMarker(
      "<<Gap>> Time: 2026-11-21T14:50:00Z, Dropped samples: 1, From: soon, To: 2026-11-21T14:50:00.250Z",
    ),
    undefined,
  );
});

Deno.test("marker times: instants, and which texts print back the same", () => {
  assert.deepEqual(markerInstant("2026-11-21T14:50:01Z"), {
    sec: 1795272601,
    ns: 0,
  });
  assert.equal(markerInstant("soon"), null);
  assert.equal(canonicalMarkerSecond("2026-11-21T14:50:01Z"), 1795272601);
  assert.ok(Number.isNaN(canonicalMarkerSecond("2026-11-21T14:50:01.5Z")));
  assert.ok(Number.isNaN(canonicalMarkerSecond(" 2026-11-21T14:50:01Z")));
});

Deno.test("peak markers: the rule unquoted, the peak as a number, /s dropped, unknown as NaN", () => {
  assert.deepEqual(
    parsePeakMarker('<<Peak>> Rule: "a, Peak: 5", Peak: 68600.5/s'),
    { rule: "a, Peak: 5", peak: 68600.5 },
  );
  assert.deepEqual(
    parsePeakMarker('<<Peak>> Rule: "r", Peak: 9007199254740753'),
    { rule: "r", peak: 9007199254740753 },
  );
  assert.deepEqual(parsePeakMarker('<<Peak>> Rule: "r", Peak: 1.5e-7'), {
    rule: "r",
    peak: 1.5e-7,
  });
  assert.ok(
    Number.isNaN(parsePeakMarker('<<Peak>> Rule: "r", Peak: unknown')!.peak),
  );
  for (
    const bad of [
      '<<Peak>> Rule: "r", Peak: ',
      '<<Peak>> Rule: "r", Peak: 1e999',
      '<<Peak>> Rule: "r", Peak: 12abc',
      '<<Peak>> Rule: "r" Peak: 3',
      "<<Peak>>",
    ]
  ) assert.equal(parsePeakMarker(bad), undefined, bad);
});
