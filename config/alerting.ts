/**
 * The values of `alerting:`: Alertmanager URLs and the push timing
 * (`timeout`, `resend_interval`, `hold`). Durations are written as in
 * rules (`10s`, `5m`) and checked against ranges that keep every timer
 * meaningful; the URL is the Alertmanager's base URL, alerts go to
 * `<url>/api/v2/alerts`.
 *
 * @module
 */

import { formatDuration, parseDuration } from "./durations.ts";
import {
  MAX_ALERT_HOLD_NS,
  MAX_ALERT_RESEND_NS,
  MAX_ALERT_TIMEOUT_NS,
  MAX_AUTH_USERNAME_CHARS,
  MAX_TEXT_CHARS,
  MIN_ALERT_HOLD_NS,
  MIN_ALERT_RESEND_NS,
  MIN_ALERT_TIMEOUT_NS,
} from "./limits.ts";
import { bad, ok, type Parsed, parseText } from "./values.ts";

/**
 * Parses an Alertmanager's base URL: `http` or `https`, a host, an
 * optional port and path prefix; no user name or password (credentials
 * belong in `basic_auth`, whose password is read from a file, not in a
 * URL that logs and `check-config` print), no query and no fragment.
 * Normalized as the URL standard spells it, without a trailing `/`, so
 * two spellings of one Alertmanager compare equal.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseAlertmanagerUrl } from "./alerting.ts";
 *
 * assert.deepEqual(parseAlertmanagerUrl("https://AM-1.example:9093/"), {
 *   ok: true,
 *   value: "https://am-1.example:9093",
 * });
 * assert.equal(parseAlertmanagerUrl("ftp://x").ok, false);
 * assert.equal(parseAlertmanagerUrl("https://agent:secret@am:9093").ok, false);
 * ```
 */
export function parseAlertmanagerUrl(value: unknown): Parsed<string> {
  if (value === undefined) return bad("is required");
  if (typeof value !== "string") {
    return bad('must be a string such as "https://am-1.example:9093"');
  }
  if (value.length > MAX_TEXT_CHARS) {
    return bad(`must be at most ${MAX_TEXT_CHARS} characters long`, "range");
  }
  const url = URL.parse(value);
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return bad(
      'must be an http or https URL such as "https://am-1.example:9093"',
    );
  }
  if (url.hostname === "") return bad("must name a host");
  if (url.username !== "" || url.password !== "") {
    return bad(
      "must not hold a user name or password: put them in basic_auth (username, password_file)",
    );
  }
  if (value.includes("?")) {
    return bad(
      "must not have a query (?...): it is the Alertmanager's base URL",
    );
  }
  if (value.includes("#")) return bad("must not have a fragment (#...)");
  const base = url.href.replace(/\/+$/, "");
  if (/\/api\/v[12]\/alerts$/.test(base)) {
    return bad(
      "must be the Alertmanager's base URL: alerts go to <url>/api/v2/alerts, so leave /api/v2/alerts out",
    );
  }
  return ok(base);
}

/**
 * A parser of durations from `min` to `max` ns, with `advice` after the
 * range in its problem.
 */
function durationWithin(
  min: number,
  max: number,
  advice: string,
): (value: unknown) => Parsed<number> {
  return (value) => {
    const parsed = parseDuration(value);
    // parseDuration's own ceiling (7 days) is past every range here.
    if (!parsed.ok && parsed.kind === "type") return parsed;
    if (!parsed.ok || parsed.value < min || parsed.value > max) {
      return bad(
        `must be from ${formatDuration(min)} to ${
          formatDuration(max)
        }${advice}`,
        "range",
      );
    }
    return parsed;
  };
}

/**
 * Parses an Alertmanager's `timeout`, how long one push may take: 100 ms
 * to 60 s, in nanoseconds.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseAlertTimeout } from "./alerting.ts";
 *
 * assert.deepEqual(parseAlertTimeout("10s"), { ok: true, value: 10_000_000_000 });
 * assert.deepEqual(parseAlertTimeout("5m"), {
 *   ok: false,
 *   problem: "must be from 100 ms to 1 min",
 *   kind: "range",
 * });
 * ```
 */
export const parseAlertTimeout: (value: unknown) => Parsed<number> =
  durationWithin(MIN_ALERT_TIMEOUT_NS, MAX_ALERT_TIMEOUT_NS, "");

/**
 * Parses `resend_interval`, how often a firing alert is sent again: 1 s
 * to 1 h, in nanoseconds.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseResendInterval } from "./alerting.ts";
 *
 * assert.deepEqual(parseResendInterval("30s"), { ok: true, value: 30_000_000_000 });
 * assert.equal(parseResendInterval("100ms").ok, false);
 * ```
 */
export const parseResendInterval: (value: unknown) => Parsed<number> =
  durationWithin(
    MIN_ALERT_RESEND_NS,
    MAX_ALERT_RESEND_NS,
    "; an alert's lease is 4 of them",
  );

/**
 * Parses `hold`, how long an alert stays firing after its rule's last
 * event ended: 1 s to a day, in nanoseconds. Not 0: the sender looks at
 * the events every 50 ms, and an event that began and ended between two
 * looks must still be sent once.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseHold } from "./alerting.ts";
 *
 * assert.deepEqual(parseHold("5m"), { ok: true, value: 300_000_000_000 });
 * assert.equal(parseHold(0).ok, false); // a burst must still reach a person
 * assert.equal(parseHold("2d").ok, false); // no day unit: write 48h
 * ```
 */
export const parseHold: (value: unknown) => Parsed<number> = durationWithin(
  MIN_ALERT_HOLD_NS,
  MAX_ALERT_HOLD_NS,
  "",
);

/**
 * Parses a basic-auth user name: non-empty one-line text without `:`,
 * which HTTP basic auth uses to split the user name from the password.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseAuthUsername } from "./alerting.ts";
 *
 * assert.deepEqual(parseAuthUsername("agent"), { ok: true, value: "agent" });
 * assert.equal(parseAuthUsername("a:b").ok, false);
 * ```
 */
export function parseAuthUsername(value: unknown): Parsed<string> {
  const text = parseText(value);
  // parseText's only range problem is its length cap, looser than the one
  // below, which names the user name's own limit.
  if (!text.ok && text.kind === "type") return text;
  const name = value as string;
  if (name.includes(":")) {
    return bad(
      "must not contain ':' (basic auth splits user and password there)",
    );
  }
  if (name.length > MAX_AUTH_USERNAME_CHARS) {
    return bad(
      `must be at most ${MAX_AUTH_USERNAME_CHARS} characters long`,
      "range",
    );
  }
  return ok(name);
}
