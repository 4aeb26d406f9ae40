// Loads foldkit-agent's generated actions with the real @agent-native/core (its own action
// discovery, which imports .ts files through jiti on Node 20) and drives them against the
// Python server started by tests/test_native_interop.py.
//
// Input (environment):
//   NATIVE_ACTIONS_DIR   absolute path of the generated actions/ folder
//   FOLDKIT_AGENT_URL    base URL of native_app's surface (read by the generated actions)
//   FOLDKIT_AGENT_TOKEN  the service token (read by the generated actions)
//   NATIVE_TRUSTING_URL  the same surface, trusting that Agent Native asked its user
//                        (native_app(trust_service_approvals=True))
//   NATIVE_EXPECTED      JSON: {capabilities: [{name, description, input_schema, title,
//                               read_only, consequential, needs_approval}],
//                               unavailable_message}
// Output: one JSON line {"checks": {...}} on stdout; exit status 1 on the first failed check.
import assert from "node:assert/strict";
import { autoDiscoverActions } from "@agent-native/core/server";

const dir = process.env.NATIVE_ACTIONS_DIR;
const expected = JSON.parse(process.env.NATIVE_EXPECTED);
const base = process.env.FOLDKIT_AGENT_URL;
const token = process.env.FOLDKIT_AGENT_TOKEN;
const checks = {};

const alice = { caller: "tool", userEmail: "alice@example.com", orgId: "org-1" };
const bob = { caller: "tool", userEmail: "bob@example.com" };

const registry = await autoDiscoverActions(dir);

// 1. Every capability is an action whose tool parameters are exactly our JSON Schema.
for (const cap of expected.capabilities) {
  const action = registry[cap.name];
  assert.ok(action, `action ${cap.name} was not discovered`);
  assert.equal(typeof action.run, "function");
  assert.deepStrictEqual(action.tool.parameters, cap.input_schema, `${cap.name} parameters`);
  assert.equal(action.tool.description, cap.description);
  // The title and hints, where agent-native keeps them (its MCP server reads these too).
  assert.equal(action.readOnly === true, cap.read_only, `${cap.name} readOnly`);
  if (cap.title !== null) {
    assert.equal(action.publicAgent?.title, cap.title, `${cap.name} title`);
    assert.equal(action.publicAgent?.expose, false, `${cap.name} stays private`);
    assert.equal(action.publicAgent?.isConsequential, cap.consequential, `${cap.name} consequential`);
  }
}
checks.loaded = expected.capabilities.map((c) => c.name);
checks.titles = Object.fromEntries(
  expected.capabilities.map((c) => [c.name, registry[c.name].publicAgent?.title ?? null])
);

const call = (name, args, ctx) => registry[name].run(args, ctx);

// 2. A valid call reaches the Python server and completes.
const created = await call("create_todo", { title: "Milk" }, alice);
assert.equal(created.ok, true, JSON.stringify(created));
assert.equal(created.status, "completed");
assert.equal(created.capability, "create_todo");
assert.equal(created.result._tag, "SavedTodo");
checks.valid = created;

// 3. An unavailable capability: ok false with the agent-facing message, not thrown.
const unavailable = await call("delete_todo", {}, alice);
assert.equal(unavailable.ok, false);
assert.equal(unavailable.message, expected.unavailable_message);
assert.equal(unavailable._tag, "AgentCapabilityUnavailableError");
checks.unavailable = unavailable;

// 4. Extra fields: agent-native's validation passes them to us (our Standard Schema validates
//    nothing); the Python side refuses them, and run returns ok false.
const extra = await call("create_todo", { title: "Eggs", priority: 1 }, alice);
assert.equal(extra.ok, false);
assert.equal(extra._tag, "AgentInvalidInputError");
assert.ok(extra.issues.some((i) => i.path === "priority"), JSON.stringify(extra.issues));
assert.match(extra.message, /Accepted fields/);
const notObject = await call("create_todo", "Eggs", alice);
assert.equal(notObject.ok, false);
assert.equal(notObject._tag, "AgentInvalidInputError");
checks.extra = { refusedBy: "foldkit-agent (run returned ok: false)", result: extra };

// 5. The principal hook decides: bob may not delete, in his own application instance.
const bobs = await call("create_todo", { title: "Bread" }, bob);
assert.equal(bobs.ok, true, JSON.stringify(bobs));
const selected = await call("select_todo", { id: bobs.result.id }, bob);
assert.equal(selected.ok, true, JSON.stringify(selected));
const denied = await call("delete_todo", {}, bob);
assert.equal(denied.ok, false);
assert.equal(denied._tag, "AgentAuthorizationError");
checks.unauthorized = denied;

// 6. A forged caller without the service token is refused.
process.env.FOLDKIT_AGENT_TOKEN = "forged-token-0123456789abcdef";
const wrongToken = await call("create_todo", { title: "Forged" }, alice);
delete process.env.FOLDKIT_AGENT_TOKEN;
const noToken = await call("create_todo", { title: "Forged" }, alice);
process.env.FOLDKIT_AGENT_TOKEN = token;
for (const refused of [wrongToken, noToken]) {
  assert.equal(refused.ok, false);
  assert.equal(refused.status, "rejected");
}
const raw = await fetch(`${base}/invoke/create_todo`, {
  method: "POST",
  headers: { "content-type": "application/json", "x-foldkit-principal": "alice@example.com" },
  body: JSON.stringify({ title: "Forged" }),
});
assert.equal(raw.status, 401);
checks.forged = { wrongToken, noToken, rawStatus: raw.status };

// 7. A host defect (the URL answers 404 in plain text) is a generic failure, no internals.
process.env.FOLDKIT_AGENT_URL = `${base}/missing`;
const defect = await call("create_todo", { title: "Lost" }, alice);
process.env.FOLDKIT_AGENT_URL = base;
assert.equal(defect.ok, false);
assert.deepStrictEqual(Object.keys(defect).sort(), ["message", "ok"]);
assert.doesNotMatch(defect.message, /404|Not Found|missing|127\.0\.0\.1/);
checks.defect = defect;

// 8. A completion that failed (FailedToSaveTodo, with its reason, for a duplicate
//    title) is ok false with the result, never a success shape.
const duplicate = await call("create_todo", { title: "Milk" }, alice);
assert.equal(duplicate.ok, false, JSON.stringify(duplicate));
assert.equal(duplicate.status, "failed");
assert.equal(duplicate.result._tag, "FailedToSaveTodo");
assert.match(duplicate.message, /failed/);
checks.failedCompletion = duplicate;

// 9. A call cancelled while it waits for its completion is ok false, not thrown.
const carol = { caller: "tool", userEmail: "carol@example.com" };
const controller = new AbortController();
const pending = call("create_todo", { title: "Later" }, { ...carol, signal: controller.signal });
setTimeout(() => controller.abort(), 10); // the todo takes 50 ms to save
const cancelled = await pending;
assert.equal(cancelled.ok, false, JSON.stringify(cancelled));
assert.match(cancelled.message, /was cancelled/);
checks.cancelledCompletion = cancelled;

// 10. Approval: each action of a confirm capability declares needsApproval (Agent Native
//     then asks its user before run). After that approval run sends X-Foldkit-Approved, and
//     only a server that trusts it (NATIVE_TRUSTING_URL) counts it as a person's approval;
//     the other refuses, as it refuses a call that no person approved.
for (const cap of expected.capabilities) {
  assert.equal(registry[cap.name].needsApproval === true, cap.needs_approval, `${cap.name} needsApproval`);
}
checks.needsApproval = Object.fromEntries(
  expected.capabilities.map((c) => [c.name, registry[c.name].needsApproval === true])
);
const dave = { caller: "tool", userEmail: "dave@example.com" };
const bread = await call("create_todo", { title: "Bread" }, dave);
assert.equal(bread.ok, true, JSON.stringify(bread));
assert.equal((await call("select_todo", { id: bread.result.id }, dave)).ok, true);
const unasked = await call("delete_todo", {}, dave);
const approvedButUntrusted = await call("delete_todo", {}, { ...dave, approvedToolCallKey: "k-1" });
for (const refused of [unasked, approvedButUntrusted]) {
  assert.equal(refused.ok, false, JSON.stringify(refused));
  assert.equal(refused._tag, "AgentApprovalError");
  assert.equal(refused.reason, "unavailable");
}
process.env.FOLDKIT_AGENT_URL = process.env.NATIVE_TRUSTING_URL;
const stillUnasked = await call("delete_todo", {}, dave);
const approved = await call("delete_todo", {}, { ...dave, approvedToolCallKey: "k-2" });
process.env.FOLDKIT_AGENT_URL = base;
assert.equal(stillUnasked.ok, false, JSON.stringify(stillUnasked));
assert.equal(stillUnasked.reason, "unavailable");
assert.equal(approved.ok, true, JSON.stringify(approved));
assert.equal(approved.capability, "delete_todo");
checks.approval = { unasked, approvedButUntrusted, stillUnasked, approved };

console.log(JSON.stringify({ checks }));
