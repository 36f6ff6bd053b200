import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { EVENT_PAGE_CSP, eventPageHtml } from "./event_page.ts";
import type { EventPageInput } from "./event_page.ts";

const KEY = {
  monitor: "nic",
  rule: "drops",
  startNs: 1_795_272_600_000_300_000n,
};

function page(input: Partial<EventPageInput> = {}): string {
  return eventPageHtml({
    key: KEY,
    log: "/var/log/dpu-traceback/nic-events.log",
    peakUnit: "",
    ...input,
  });
}

Deno.test("the policy lets the page's own style sheet apply and nothing else load or run", () => {
  const html = page();
  const style = /<style>([^<]*)<\/style>/.exec(html)![1];
  const hash = createHash("sha256").update(style).digest("base64");
  assert.match(
    EVENT_PAGE_CSP,
    new RegExp(`style-src 'sha256-${RegExp.escape(hash)}'`),
  );
  assert.match(EVENT_PAGE_CSP, /^default-src 'none';/);
  assert.match(EVENT_PAGE_CSP, /frame-ancestors 'none'/);
  assert.doesNotMatch(html, /<script|<img|<link|<iframe|\son[a-z]+=|style="/i);
});

Deno.test("names from a log or a request are text on the page, never markup", () => {
  const hostile = '<script>alert("x")</script>&\u202e';
  const html = page({
    key: { monitor: hostile, rule: `a"><b onmouseover=x>`, startNs: 0n },
    summary: "<i>not italic</i>",
    missing: "<b>not bold</b>",
    live: {
      state: "open",
      peak: 3,
      durationS: 1.5,
      samples: 15,
      lostBeforeStart: 0,
    },
  });
  assert.doesNotMatch(html, /<script>|<b>|<i>|<b onmouseover/);
  assert.match(
    html,
    /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;&amp;\\u202e/,
  );
  assert.match(html, /&lt;i&gt;not italic&lt;\/i&gt;/);
});

Deno.test("an event the agent still holds, whose rows are gone: the facts, the reason, the command", () => {
  const html = page({
    missing:
      "Its rows were rotated away: the oldest log, nic-events.log.3.gz, begins at 2026-11-22T00:00:00Z.",
    live: {
      state: "ended",
      peak: 12,
      durationS: 0.002,
      samples: 20,
      lostBeforeStart: 4,
    },
    severity: "critical",
  });
  assert.match(html, /<h1>drops on nic<\/h1>/);
  assert.match(
    html,
    /<span class="sev critical">critical<\/span> ended after 2 ms/,
  );
  assert.match(
    html,
    /<dt>Start<\/dt><dd>2026-11-21T14:50:00.000300000Z \(the start sample\)<\/dd>/,
  );
  assert.match(html, /<dt>Duration<\/dt><dd>2 ms<\/dd>/);
  assert.match(html, /<dt>Samples<\/dt><dd>20<\/dd>/);
  assert.match(html, /Its rows were rotated away: the oldest log/);
  assert.match(html, /the source lost 4 samples \(a stall\)/);
  assert.match(
    html,
    /<code>dpu-traceback review \/var\/log\/dpu-traceback\/nic-events.log --event 2026-11-21T14:50:00.000300000Z --rule=&#39;drops&#39;<\/code>/,
  );
  assert.doesNotMatch(html, /<figure>|rows\.csv/);
  assert.match(
    html,
    /<meta name="viewport" content="width=device-width, initial-scale=1">/,
  );
});

Deno.test("an open event says so and how long so far", () => {
  const html = page({
    live: {
      state: "open",
      peak: null,
      durationS: 4.25,
      samples: 42,
      lostBeforeStart: 0,
    },
  });
  assert.match(html, /<dt>End<\/dt><dd>still open<\/dd>/);
  assert.match(html, /<dt>Duration<\/dt><dd>4.250 s so far<\/dd>/);
  assert.match(html, /<dt>Peak<\/dt><dd>not known<\/dd>/);
});

Deno.test("a NIC event's page names the GPUs behind the NIC, or why none", () => {
  const html = page({
    gpus: {
      nic: "0000:1a:00.0",
      gpus: [{
        index: 0,
        uuid: "GPU-aaaa",
        busId: "0000:18:00.0",
        link: "PIX",
      }],
    },
  });
  assert.match(
    html,
    /<dt>GPUs behind 0000:1a:00.0<\/dt><dd>GPU 0 \(GPU-aaaa, 0000:18:00.0\) PIX<\/dd>/,
  );
  const none = page({
    gpus: {
      nic: "0000:8a:00.0",
      gpus: [],
      none: "no GPU shares its NUMA node",
    },
  });
  assert.match(none, /<dd>none known \(no GPU shares its NUMA node\)<\/dd>/);
});
