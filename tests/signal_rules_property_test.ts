import { agreeOnRandomCaptures } from "./signal_rules_property.ts";

// The first 50 of the slow tier's 500 random captures
// (tests/slow/signal_rules_property_test.ts), with its bounds on how much
// they exercise scaled to a tenth.
Deno.test("signal rules: 50 random captures through the replay source agree with a model of docs/spec/signal-rules.md", async () => {
  await agreeOnRandomCaptures(50, 30_000, 20);
});
