import assert from "node:assert/strict";
import {
  alertmanagerUrl,
  alertTimeout,
  authUsername,
  hold,
  resendInterval,
} from "./alerting.ts";
import { parseValue } from "./values.ts";

const parseAlertmanagerUrl = (v: unknown) => parseValue(alertmanagerUrl, v);
const parseAlertTimeout = (v: unknown) => parseValue(alertTimeout, v);
const parseAuthUsername = (v: unknown) => parseValue(authUsername, v);
const parseHold = (v: unknown) => parseValue(hold, v);
const parseResendInterval = (v: unknown) => parseValue(resendInterval, v);
import { parseConfig } from "./load.ts";
import { DEFAULTS } from "./types.ts";

const MONITORS = `monitors:
  - name: nic
    source: sim
    columns: [{ name: rx, data_id: "0x1" }]
`;

/** An agent-form file with `alerting` (YAML text, indented by the caller). */
function withAlerting(alerting: string): string {
  return `alerting:\n${alerting}\n${MONITORS}`;
}

Deno.test("parseConfig() reads every alerting key into milliseconds and plain fields", () => {
  const config = parseConfig(
    withAlerting(`  alertmanagers:
    - url: https://am-1.example:9093
      timeout: 2.5s
      tls:
        ca_file: /etc/dpu-traceback/am-ca.pem
        cert_file: /etc/dpu-traceback/agent.pem
        key_file: /etc/dpu-traceback/agent-key.pem
      basic_auth: { username: agent, password_file: /etc/dpu-traceback/am-password }
    - url: http://am-2.example:9093/alertmanager/
      bearer_token_file: /etc/dpu-traceback/am-token
  resend_interval: 10s
  hold: 1s`),
    "a.yaml",
  );
  assert.deepEqual(config.alerting, {
    alertmanagers: [
      {
        url: "https://am-1.example:9093",
        timeoutMs: 2500,
        tls: {
          caFile: "/etc/dpu-traceback/am-ca.pem",
          certFile: "/etc/dpu-traceback/agent.pem",
          keyFile: "/etc/dpu-traceback/agent-key.pem",
        },
        basicAuth: {
          username: "agent",
          passwordFile: "/etc/dpu-traceback/am-password",
        },
      },
      {
        url: "http://am-2.example:9093/alertmanager",
        timeoutMs: DEFAULTS.alertTimeoutMs,
        bearerTokenFile: "/etc/dpu-traceback/am-token",
      },
    ],
    resendIntervalMs: 10_000,
    holdMs: 1000,
  });
});

Deno.test("parseConfig() fills the alerting defaults and leaves alerting out when not configured", () => {
  const config = parseConfig(
    withAlerting("  alertmanagers: [{ url: 'http://127.0.0.1:9093' }]"),
    "a.yaml",
  );
  assert.deepEqual(config.alerting, {
    alertmanagers: [{ url: "http://127.0.0.1:9093", timeoutMs: 10_000 }],
    resendIntervalMs: 30_000,
    holdMs: 300_000,
  });
  assert.equal(DEFAULTS.alertResendIntervalMs, 30_000);
  assert.equal(DEFAULTS.alertHoldMs, 300_000);
  const none = parseConfig(MONITORS, "a.yaml");
  assert.equal("alerting" in none, false);
});

Deno.test("parseConfig() refuses each bad alerting setting with its path and reason", () => {
  const am = (entry: string) => `  alertmanagers: [${entry}]`;
  const cases: [string, string, string][] = [
    [
      am("{ url: 'ftp://x' }"),
      "TypeError",
      'alerting.alertmanagers[0].url must be an http or https URL such as "https://am-1.example:9093", got "ftp://x"',
    ],
    [
      am("{ url: 'am-1:9093' }"),
      "TypeError",
      'alerting.alertmanagers[0].url must be an http or https URL such as "https://am-1.example:9093", got "am-1:9093"',
    ],
    [
      am("{ url: 9093 }"),
      "TypeError",
      'alerting.alertmanagers[0].url must be a string such as "https://am-1.example:9093", got 9093',
    ],
    [
      am("{ url: 'https://agent:secret@am:9093' }"),
      "TypeError",
      'alerting.alertmanagers[0].url must not hold a user name or password: put them in basic_auth (username, password_file), got "https://agent:secret@am:9093"',
    ],
    [
      am("{ url: 'https://am:9093/?x=1' }"),
      "TypeError",
      'alerting.alertmanagers[0].url must not have a query (?...): it is the Alertmanager\'s base URL, got "https://am:9093/?x=1"',
    ],
    [
      am("{ url: 'https://am:9093/#top' }"),
      "TypeError",
      'alerting.alertmanagers[0].url must not have a fragment (#...), got "https://am:9093/#top"',
    ],
    [
      am("{ url: 'https://am:9093/api/v2/alerts' }"),
      "TypeError",
      'alerting.alertmanagers[0].url must be the Alertmanager\'s base URL: alerts go to <url>/api/v2/alerts, so leave /api/v2/alerts out, got "https://am:9093/api/v2/alerts"',
    ],
    [
      am("{ timeout: 1s }"),
      "TypeError",
      "alerting.alertmanagers[0].url is required, got nothing",
    ],
    [
      am("{ url: 'https://am', timeout: 50ms }"),
      "RangeError",
      'alerting.alertmanagers[0].timeout must be from 100 ms to 1 min, got "50ms"',
    ],
    [
      am("{ url: 'https://am', timeout: 61s }"),
      "RangeError",
      'alerting.alertmanagers[0].timeout must be from 100 ms to 1 min, got "61s"',
    ],
    [
      am("{ url: 'https://am', timeout: 10 }"),
      "TypeError",
      'alerting.alertmanagers[0].timeout needs a unit, e.g. "500us" or "10ms" (ns, us, µs, ms, s, m (minutes) or h), got 10',
    ],
    [
      am("{ url: 'http://am', tls: { ca_file: /ca.pem } }"),
      "TypeError",
      'alerting.alertmanagers[0].tls is for an https URL; this Alertmanager\'s url is http, got {"ca_file":"/ca.pem"}',
    ],
    [
      am("{ url: 'https://am', tls: { cert_file: /c.pem } }"),
      "TypeError",
      "alerting.alertmanagers[0].tls.key_file is required with cert_file: a client certificate and its key go together, got nothing",
    ],
    [
      am("{ url: 'https://am', tls: { key_file: /k.pem } }"),
      "TypeError",
      "alerting.alertmanagers[0].tls.cert_file is required with key_file: a client certificate and its key go together, got nothing",
    ],
    [
      am("{ url: 'https://am', tls: { ca: /ca.pem } }"),
      "TypeError",
      "alerting.alertmanagers[0].tls.ca is not a known key; expected one of ca_file, cert_file, key_file",
    ],
    [
      am(
        "{ url: 'https://am', basic_auth: { username: a, password_file: /p }, bearer_token_file: /t }",
      ),
      "TypeError",
      'alerting.alertmanagers[0].bearer_token_file cannot be given with basic_auth: an Alertmanager takes one kind of credentials, got "/t"',
    ],
    [
      am(
        "{ url: 'https://am', basic_auth: { username: a, password: hunter2 } }",
      ),
      "TypeError",
      'alerting.alertmanagers[0].basic_auth.password is not accepted: put the password in a file only the agent can read and name it in password_file, got "hunter2"',
    ],
    [
      am("{ url: 'https://am', basic_auth: { username: a } }"),
      "TypeError",
      "alerting.alertmanagers[0].basic_auth.password_file is required: the file the password is read from, got nothing",
    ],
    [
      am(
        "{ url: 'https://am', basic_auth: { username: 'a:b', password_file: /p } }",
      ),
      "TypeError",
      "alerting.alertmanagers[0].basic_auth.username must not contain ':' (basic auth splits user and password there), got \"a:b\"",
    ],
    [
      am("{ url: 'https://am', basic_auth: { password_file: /p } }"),
      "TypeError",
      "alerting.alertmanagers[0].basic_auth.username is required, got nothing",
    ],
    [
      am("{ url: 'https://am', bearer_token: abc }"),
      "TypeError",
      'alerting.alertmanagers[0].bearer_token is not accepted: put the token in a file only the agent can read and name it in bearer_token_file, got "abc"',
    ],
    [
      am("{ url: 'https://am-1:9093' }, { url: 'HTTPS://AM-1:9093/' }"),
      "TypeError",
      'alerting.alertmanagers[1].url is also the url of alerting.alertmanagers[0]; list each Alertmanager once (every one gets every alert), got "HTTPS://AM-1:9093/"',
    ],
    [
      "  alertmanagers: []",
      "RangeError",
      "alerting.alertmanagers must list at least 1 Alertmanager, got []",
    ],
    [
      am(
        Array.from({ length: 9 }, (_, i) => `{ url: 'http://am-${i}' }`)
          .join(", "),
      ),
      "RangeError",
      "alerting.alertmanagers must list at most 8 Alertmanagers, got ",
    ],
    [
      "  resend_interval: 30s",
      "TypeError",
      "alerting.alertmanagers is required, got nothing",
    ],
    [
      am("{ url: 'http://am' }") + "\n  resend_interval: 500ms",
      "RangeError",
      'alerting.resend_interval must be from 1 s to 1 h; an alert\'s lease is 4 of them, got "500ms"',
    ],
    [
      am("{ url: 'http://am' }") + "\n  resend_interval: 2h",
      "RangeError",
      'alerting.resend_interval must be from 1 s to 1 h; an alert\'s lease is 4 of them, got "2h"',
    ],
    [
      am("{ url: 'http://am' }") + "\n  hold: 0",
      "RangeError",
      "alerting.hold must be from 1 s to 24 h, got 0",
    ],
    [
      am("{ url: 'http://am' }") + "\n  hold: 25h",
      "RangeError",
      'alerting.hold must be from 1 s to 24 h, got "25h"',
    ],
    [
      am("{ url: 'http://am' }") + "\n  hold: -1s",
      "RangeError",
      'alerting.hold must be from 1 s to 24 h, got "-1s"',
    ],
    [
      am("{ url: 'http://am' }") + "\n  resend_intervall: 30s",
      "TypeError",
      'alerting.resend_intervall is not a known key; expected one of alertmanagers, resend_interval, hold, got "30s"; did you mean "resend_interval"?',
    ],
  ];
  for (const [alerting, name, message] of cases) {
    assert.throws(
      () => parseConfig(withAlerting(alerting), "a.yaml"),
      (error: Error) => {
        assert.equal(error.name, name, alerting);
        assert.ok(
          /^Cannot load config a\.yaml:\d+: /.test(error.message) &&
            error.message.replace(/^(Cannot load config a\.yaml):\d+:/, "$1:")
              .startsWith(`Cannot load config a.yaml: ${message}`),
          `${alerting}\n${error.message}`,
        );
        return true;
      },
    );
  }
});

Deno.test("tls.server_name is refused: Deno verifies the URL's host name", () => {
  assert.throws(
    () =>
      parseConfig(
        withAlerting(
          "  alertmanagers: [{ url: 'https://10.0.0.5:9093', tls: { ca_file: /ca.pem, server_name: am.example } }]",
        ),
        "a.yaml",
      ),
    {
      name: "TypeError",
      message:
        `Cannot load config a.yaml:2: alerting.alertmanagers[0].tls.server_name is not supported: Deno's HTTP client verifies the URL's host name; put that name in the URL (and, if DNS does not resolve it, in /etc/hosts), got "am.example"`,
    },
  );
});

Deno.test("alerting is refused in the reference form, which stays verbatim", () => {
  assert.throws(
    () =>
      parseConfig(
        JSON.stringify({
          "data-ids": [{ name: "rx", data_id: "0x1" }],
          alerting: { alertmanagers: [{ url: "http://am" }] },
        }),
        "rules.json",
      ),
    {
      name: "TypeError",
      message:
        'Cannot load config rules.json:1: alerting is not a known key; expected one of diag_sample_period_ns, sample_history_depth, data-ids, rules, got {"alertmanagers":[{"url":"http://am"}]}',
    },
  );
});

Deno.test("the value parsers take their bounds exactly", () => {
  assert.deepEqual(parseAlertTimeout("100ms"), { ok: true, value: 100e6 });
  assert.deepEqual(parseAlertTimeout("60s"), { ok: true, value: 60e9 });
  assert.equal(parseAlertTimeout("99ms").ok, false);
  assert.equal(parseAlertTimeout("60001ms").ok, false);
  assert.deepEqual(parseResendInterval("1s"), { ok: true, value: 1e9 });
  assert.deepEqual(parseResendInterval("1h"), { ok: true, value: 3600e9 });
  assert.equal(parseResendInterval("999ms").ok, false);
  assert.deepEqual(parseHold("24h"), { ok: true, value: 86_400e9 });
  assert.equal(parseHold("1441m").ok, false);
  assert.deepEqual(parseAlertmanagerUrl("http://[::1]:9093"), {
    ok: true,
    value: "http://[::1]:9093",
  });
  assert.equal(parseAlertmanagerUrl("https://am:9093?").ok, false);
  assert.equal(parseAlertmanagerUrl("https://am:9093/#").ok, false);
  assert.equal(parseAlertmanagerUrl("https://:pw@am").ok, false);
  assert.equal(parseAlertmanagerUrl("x".repeat(5000)).ok, false);
  assert.equal(parseAuthUsername("a\nb").ok, false);
  assert.equal(parseAuthUsername("").ok, false);
});

Deno.test("parseAuthUsername() checks text as parseText does, then its own limits", () => {
  const refused: [unknown, string, "type" | "range"][] = [
    [undefined, "is required", "type"],
    [7, "must be a string", "type"],
    [
      "a\uD800b",
      "must not contain a lone surrogate (half a UTF-16 pair)",
      "type",
    ],
    [
      "a:b",
      "must not contain ':' (basic auth splits user and password there)",
      "type",
    ],
    ["u".repeat(257), "must be at most 256 characters long", "range"],
    // Past parseText's own cap, the user name's limit is still the one named.
    ["u".repeat(5000), "must be at most 256 characters long", "range"],
    [
      "u".repeat(5000) + ":",
      "must not contain ':' (basic auth splits user and password there)",
      "type",
    ],
  ];
  for (const [value, problem, kind] of refused) {
    assert.deepEqual(parseAuthUsername(value), { ok: false, problem, kind });
  }
  assert.deepEqual(parseAuthUsername("u".repeat(256)), {
    ok: true,
    value: "u".repeat(256),
  });
});
