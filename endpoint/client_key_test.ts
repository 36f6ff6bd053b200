import assert from "node:assert/strict";
import { clientKey } from "./client_key.ts";

const tcp = (hostname: string): Deno.NetAddr => ({
  transport: "tcp",
  hostname,
  port: 40000,
});

Deno.test("IPv6 clients are counted by /64, so one host cannot dodge a bound by changing address", () => {
  // A third address in the same /64 is the same client.
  assert.equal(
    clientKey(tcp("2001:db8:1:2::1")),
    clientKey(tcp("2001:db8:1:2:ffff::3")),
  );
  assert.equal(
    clientKey(tcp("2001:db8:1:2::2")),
    clientKey(tcp("2001:db8:1:2::1")),
  );
  // Another /64 is another client; IPv4 addresses are each their own.
  assert.notEqual(
    clientKey(tcp("2001:db8:1:3::1")),
    clientKey(tcp("2001:db8:1:2::1")),
  );
  assert.notEqual(clientKey(tcp("10.0.0.1")), clientKey(tcp("10.0.0.2")));
});
