import { agreeOnRandomCaptures } from "../signal_rules_property.ts";

Deno.test("signal rules: 500 random captures through the replay source agree with a model of docs/spec/signal-rules.md", async () => {
  await agreeOnRandomCaptures(500, 300_000, 200);
});
