/**
 * The `alerting:` section: the Alertmanagers events are pushed to, how to
 * reach each (TLS, one kind of credentials, read from files), and the push
 * timing (`timeout`, `resend_interval`, `hold`). Durations are written as
 * in rules (`10s`, `5m`) and held to ranges that keep every timer
 * meaningful; a URL is the Alertmanager's base URL, alerts go to
 * `<url>/api/v2/alerts`.
 *
 * @module
 */

import { z } from "zod";
import { formatDuration } from "../base/units.ts";
import { parseDuration } from "./durations.ts";
import {
  MAX_ALERT_HOLD_NS,
  MAX_ALERT_RESEND_NS,
  MAX_ALERT_TIMEOUT_NS,
  MAX_ALERTMANAGERS,
  MAX_AUTH_USERNAME_CHARS,
  MAX_TEXT_CHARS,
  MIN_ALERT_HOLD_NS,
  MIN_ALERT_RESEND_NS,
  MIN_ALERT_TIMEOUT_NS,
} from "./limits.ts";
import { list, strict } from "./objects.ts";
import {
  type AlertingConfig,
  type AlertmanagerConfig,
  DEFAULTS,
} from "./types.ts";
import { bad, grammar, oneLine, type Parsed, text } from "./values.ts";

const EXAMPLE_URL = '"https://am-1.example:9093"';

/**
 * An Alertmanager's base URL: `http` or `https`, a host, an optional port
 * and path prefix; no user name or password (credentials belong in
 * `basic_auth`, not in a URL that logs print), no query and no fragment.
 * Normalized as the URL standard spells it, without a trailing `/`, so two
 * spellings of one Alertmanager compare equal.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { alertmanagerUrl } from "./alerting.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(alertmanagerUrl, "https://AM-1.example:9093/"), {
 *   ok: true,
 *   value: "https://am-1.example:9093",
 * });
 * assert.equal(parseValue(alertmanagerUrl, "ftp://x").ok, false);
 * assert.equal(parseValue(alertmanagerUrl, "https://agent:secret@am:9093").ok, false);
 * ```
 */
export const alertmanagerUrl: z.ZodType<string> = z.string({
  error: (iss) =>
    iss.code === "invalid_type" && iss.input !== undefined
      ? `must be a string such as ${EXAMPLE_URL}`
      : undefined,
})
  .max(MAX_TEXT_CHARS, { abort: true })
  .refine((s) => /^https?:$/.test(URL.parse(s)?.protocol ?? ""), {
    error: `must be an http or https URL such as ${EXAMPLE_URL}`,
    abort: true,
  })
  .refine((s) => URL.parse(s)!.hostname !== "", {
    error: "must name a host",
    abort: true,
  })
  .refine((s) => URL.parse(s)!.username + URL.parse(s)!.password === "", {
    error:
      "must not hold a user name or password: put them in basic_auth (username, password_file)",
    abort: true,
  })
  .refine((s) => !s.includes("?"), {
    error: "must not have a query (?...): it is the Alertmanager's base URL",
    abort: true,
  })
  .refine((s) => !s.includes("#"), {
    error: "must not have a fragment (#...)",
    abort: true,
  })
  .transform((s) => URL.parse(s)!.href.replace(/\/+$/, ""))
  .refine((s) => !/\/api\/v[12]\/alerts$/.test(s), {
    error:
      "must be the Alertmanager's base URL: alerts go to <url>/api/v2/alerts, so leave /api/v2/alerts out",
  });

/** Durations from `min` to `max` ns, with `advice` after the range. */
function durationWithin(
  min: number,
  max: number,
  advice = "",
): z.ZodType<number> {
  const problem = `must be from ${
    formatDuration(min / 1e9, { exact: true })
  } to ${formatDuration(max / 1e9, { exact: true })}${advice}`;
  return grammar((value): Parsed<number> => {
    const parsed = parseDuration(value);
    // parseDuration's own ceiling (7 days) is past every range here.
    if (!parsed.ok && parsed.kind === "type") return parsed;
    return !parsed.ok || parsed.value < min || parsed.value > max
      ? bad(problem, "range")
      : parsed;
  });
}

/**
 * An Alertmanager's `timeout`, how long one push may take: 100 ms to 60 s,
 * in nanoseconds.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { alertTimeout } from "./alerting.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(alertTimeout, "10s"), { ok: true, value: 10_000_000_000 });
 * assert.deepEqual(parseValue(alertTimeout, "5m"), { ok: false, problem: "must be from 100 ms to 1 min", kind: "range" });
 * ```
 */
export const alertTimeout: z.ZodType<number> = durationWithin(
  MIN_ALERT_TIMEOUT_NS,
  MAX_ALERT_TIMEOUT_NS,
);

/**
 * `resend_interval`, how often a firing alert is sent again: 1 s to 1 h,
 * in nanoseconds.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { resendInterval } from "./alerting.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(resendInterval, "30s"), { ok: true, value: 30_000_000_000 });
 * assert.equal(parseValue(resendInterval, "100ms").ok, false);
 * ```
 */
export const resendInterval: z.ZodType<number> = durationWithin(
  MIN_ALERT_RESEND_NS,
  MAX_ALERT_RESEND_NS,
  "; an alert's lease is 4 of them",
);

/**
 * `hold`, how long an alert stays firing after its rule's last event
 * ended: 1 s to a day, in nanoseconds. Not 0: the sender looks at the
 * events when woken by a change (at most every 10 ms), and an event that
 * began and ended between two looks must still be sent once.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { hold } from "./alerting.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(hold, "5m"), { ok: true, value: 300_000_000_000 });
 * assert.equal(parseValue(hold, 0).ok, false); // a burst must still reach a person
 * assert.equal(parseValue(hold, "2d").ok, false); // no day unit: write 48h
 * ```
 */
export const hold: z.ZodType<number> = durationWithin(
  MIN_ALERT_HOLD_NS,
  MAX_ALERT_HOLD_NS,
);

/**
 * A basic-auth user name: one line of text without `:`, which HTTP basic
 * auth uses to split the user name from the password.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { authUsername } from "./alerting.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(authUsername, "agent"), { ok: true, value: "agent" });
 * assert.equal(parseValue(authUsername, "a:b").ok, false);
 * ```
 */
export const authUsername: z.ZodType<string> = oneLine()
  .refine((s) => !s.includes(":"), {
    error: "must not contain ':' (basic auth splits user and password there)",
    abort: true,
  })
  .max(MAX_AUTH_USERNAME_CHARS);

/**
 * `tls:` of an Alertmanager: a client certificate comes with its key.
 * `server_name` is refused: Deno's HTTP client can only verify the URL's
 * own host name.
 */
const tls = strict({
  ca_file: text.optional(),
  cert_file: text.optional(),
  key_file: text.optional(),
}, {
  refuse: {
    server_name:
      "is not supported: Deno's HTTP client verifies the URL's host name; put that name in the URL (and, if DNS does not resolve it, in /etc/hosts)",
  },
}).check((ctx) => {
  const { cert_file, key_file } = ctx.value;
  if ((cert_file === undefined) === (key_file === undefined)) return;
  const [given, missing] = cert_file === undefined
    ? ["key_file", "cert_file"]
    : ["cert_file", "key_file"];
  ctx.issues.push({
    code: "custom",
    message:
      `is required with ${given}: a client certificate and its key go together`,
    path: [missing],
    input: undefined,
  });
});

/** `basic_auth:` of an Alertmanager; the password only ever from a file. */
const basicAuth = strict({
  username: authUsername,
  password_file: text.optional(),
}, {
  refuse: {
    password:
      "is not accepted: put the password in a file only the agent can read and name it in password_file",
  },
}).check((ctx) => {
  if (ctx.value.password_file !== undefined) return;
  ctx.issues.push({
    code: "custom",
    message: "is required: the file the password is read from",
    path: ["password_file"],
    input: undefined,
  });
}).transform((auth) => ({
  username: auth.username,
  password_file: auth.password_file!,
}));

/**
 * One Alertmanager: its base URL and how to reach it. Basic auth and a
 * bearer token exclude each other; `tls` is for an https URL only.
 */
const alertmanager = strict({
  url: alertmanagerUrl,
  timeout: alertTimeout.optional(),
  tls: tls.optional(),
  basic_auth: basicAuth.optional(),
  bearer_token_file: text.optional(),
}, {
  refuse: {
    bearer_token:
      "is not accepted: put the token in a file only the agent can read and name it in bearer_token_file",
  },
}).check((ctx) => {
  const am = ctx.value;
  const push = (path: string, message: string) => {
    ctx.issues.push({
      code: "custom",
      message,
      path: [path],
      input: am[path as keyof typeof am],
    });
  };
  if (am.basic_auth !== undefined && am.bearer_token_file !== undefined) {
    push(
      "bearer_token_file",
      "cannot be given with basic_auth: an Alertmanager takes one kind of credentials",
    );
  }
  if (am.tls !== undefined && !am.url.startsWith("https:")) {
    push("tls", "is for an https URL; this Alertmanager's url is http");
  }
}).transform((am): AlertmanagerConfig => ({
  url: am.url,
  timeoutMs: am.timeout === undefined
    ? DEFAULTS.alertTimeoutMs
    : am.timeout / 1e6,
  ...(am.tls === undefined ? {} : {
    tls: {
      ...(am.tls.ca_file === undefined ? {} : { caFile: am.tls.ca_file }),
      ...(am.tls.cert_file === undefined ? {} : { certFile: am.tls.cert_file }),
      ...(am.tls.key_file === undefined ? {} : { keyFile: am.tls.key_file }),
    },
  }),
  ...(am.basic_auth === undefined ? {} : {
    basicAuth: {
      username: am.basic_auth.username,
      passwordFile: am.basic_auth.password_file,
    },
  }),
  ...(am.bearer_token_file === undefined
    ? {}
    : { bearerTokenFile: am.bearer_token_file }),
}));

/**
 * `alerting:`: where events are pushed as alerts, and how often, with the
 * defaults filled in and durations in ms. The same Alertmanager twice is
 * refused: it would get every alert twice.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { alertingSchema } from "./alerting.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(alertingSchema, { alertmanagers: [{ url: "http://am:9093/" }], hold: "1m" }), {
 *   ok: true,
 *   value: { alertmanagers: [{ url: "http://am:9093", timeoutMs: 10_000 }], resendIntervalMs: 30_000, holdMs: 60_000 },
 * });
 * ```
 */
export const alertingSchema: z.ZodType<AlertingConfig> = strict({
  alertmanagers: list(
    alertmanager,
    ["Alertmanager", "Alertmanagers"],
    1,
    MAX_ALERTMANAGERS,
  ).check((ctx) => {
    const first = new Map<string, number>();
    for (const [i, { url }] of ctx.value.entries()) {
      const earlier = first.get(url);
      if (earlier === undefined) first.set(url, i);
      else {
        ctx.issues.push({
          code: "custom",
          message:
            `is also the url of alerting.alertmanagers[${earlier}]; list each Alertmanager once (every one gets every alert)`,
          path: [i, "url"],
          input: url,
        });
      }
    }
  }),
  resend_interval: resendInterval.optional(),
  hold: hold.optional(),
}).transform((alerting): AlertingConfig => ({
  alertmanagers: alerting.alertmanagers,
  resendIntervalMs: alerting.resend_interval === undefined
    ? DEFAULTS.alertResendIntervalMs
    : alerting.resend_interval / 1e6,
  holdMs: alerting.hold === undefined
    ? DEFAULTS.alertHoldMs
    : alerting.hold / 1e6,
}));
