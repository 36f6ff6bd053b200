/**
 * An event's page as an on-call engineer opens it: a running agent with
 * TLS and basic auth on, its event's link loaded in Debian's headless
 * Chromium at a phone's width, the screenshot checked for the picture;
 * then the agent restarted on the same events.log, and the same link
 * opening the same event.
 *
 * Needs `chromium` and `openssl` on PATH; `.ci/run` installs Chromium.
 * Run with `deno task test:e2e`.
 *
 * @module
 */

import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import { chromium, decodePng, findChromium } from "../review_util.ts";
import { type StartedAgent, startedAgent } from "../agent_util.ts";
import { selfSignedCert } from "../tls_cert.ts";
import { tempDir } from "../temp_dir.ts";

const FOUND = findChromium();
if (FOUND === undefined) {
  throw new Error(
    "chromium is not on PATH: install it with: apt-get install chromium",
  );
}
const CHROMIUM: string = FOUND;

const USER = "oncall";
const PASSWORD = "3am: s3cret";

Deno.test("an event's link opens its picture in a browser through TLS and basic auth, and still does after the agent restarts", async () => {
  await using dir = await tempDir("page");
  const cert = await selfSignedCert(dir.path, "agent");
  await Deno.writeTextFile(
    `${dir.path}/web.yml`,
    `tls_server_config:
  cert_file: ${cert.certFile}
  key_file: ${cert.keyFile}
basic_auth_users:
  ${USER}: "${bcrypt.hashSync(PASSWORD, 4)}"
`,
  );
  const log = `${dir.path}/events.log`;
  const start = () =>
    startedAgent([
      "demo",
      "-q",
      "--duration",
      "300",
      "--event-log",
      log,
      "--listen",
      "127.0.0.1:0",
      "--web-config-file",
      `${dir.path}/web.yml`,
    ], {
      client: Deno.createHttpClient({ caCerts: [cert.cert] }),
      authorization: `Basic ${btoa(`${USER}:${PASSWORD}`)}`,
    });

  let agent: StartedAgent | undefined = await start();
  try {
    assert.match(agent.url, /^https:\/\/127\.0\.0\.1:\d+\/$/);
    // The first event that has ended: its page cannot change any more.
    const listed = JSON.parse(
      await agent.waitFor(
        "/api/v1/events",
        (body) =>
          JSON.parse(body).events.some((e: { state: string }) =>
            e.state === "ended"
          ),
        60_000,
      ),
    );
    const event = listed.events.find((e: { state: string }) =>
      e.state === "ended"
    );
    assert.match(
      event.page,
      /^\/events\/[^/]+\/[^/]+\/\d{4}-\d\d-\d\dT[\d:.]{18}Z$/,
    );
    const before = await (await agent.get(event.page)).text();
    assert.match(before, /<figure><svg /);

    // Chromium, as a person on a phone, with the credentials in the link.
    const url = new URL(event.page.slice(1), agent.url);
    url.username = USER;
    url.password = encodeURIComponent(PASSWORD);
    const browser = [
      "--ignore-certificate-errors",
      "--window-size=412,1400",
    ];
    const dom = await chromium(
      CHROMIUM,
      [...browser, "--dump-dom", url.href],
      dir.path,
    );
    assert.match(
      dom,
      new RegExp(
        `<h1>${RegExp.escape(htmlText(event.rule))} on ${
          RegExp.escape(event.monitor)
        }</h1>`,
      ),
    );
    assert.match(dom, /<svg [^>]*viewBox="0 0 560 /);
    const shot = `${dir.path}/page.png`;
    await chromium(
      CHROMIUM,
      [...browser, `--screenshot=${shot}`, url.href],
      dir.path,
    );
    const image = await decodePng(await Deno.readFile(shot));
    assert.equal(image.width, 412);
    // The event's span is shaded red (#fecaca at 45 % on white) and the
    // signal drawn in #dc2626: both must be on the screen.
    const count = (match: (r: number, g: number, b: number) => boolean) => {
      let n = 0;
      for (let i = 0; i < image.rgba.length; i += 4) {
        if (match(image.rgba[i], image.rgba[i + 1], image.rgba[i + 2])) n++;
      }
      return n;
    };
    const shaded = count((r, g, b) =>
      r > 245 && g > 215 && g < 240 && b > 215 && b < 240
    );
    const line = count((r, g, b) => r > 190 && g < 80 && b < 80);
    assert.ok(shaded > 2000, `${shaded} shaded pixels`);
    assert.ok(line > 50, `${line} pixels of the signal's line`);

    // Restarted on the same log, the agent finds the same event there.
    await agent.stop();
    agent = undefined;
    agent = await start();
    const after = await agent.get(event.page);
    assert.equal(after.status, 200);
    const page = await after.text();
    for (const fact of ["Start", "End", "Duration", "Peak"]) {
      const pick = (html: string) =>
        new RegExp(`<dt>${fact}</dt><dd>([^<]*)</dd>`).exec(html)?.[1];
      assert.equal(pick(page), pick(before), fact);
    }
    assert.match(page, /<figure><svg /);
    // Hostile requests get a clear 4xx, not a page.
    const bad = await agent.get("/events/nic/x/not-a-time");
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
    const far = await agent.get(`${event.page.replace(/\d{3}Z$/, "999Z")}`);
    assert.equal(far.status, 404);
    await far.body?.cancel();
  } finally {
    await agent?.stop();
  }
});

/** `text` as the page escapes it. */
function htmlText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(
    ">",
    "&gt;",
  ).replaceAll('"', "&quot;").replaceAll("'", "&#39;");
}
