// Drive AG-UI runs with the official AG-UI client (@ag-ui/client), one after another, as the
// front ends of several people would: each step names its bearer token and its thread.
//
//   node tests/interop/ag_ui_runs.mjs URL '[{"token": "t", "thread": "a", "text": "add Milk"},
//                                           {"token": "t", "thread": "a", "resume": "approve"}]'
//
// A step has "text" (a user message) or "resume" ("approve" or "decline": the answer to the
// last interrupt of its thread, with the step's "reason" if any); "token" may be left out. One HttpAgent per thread keeps that thread's messages and
// state, applied with fast-json-patch. Prints one JSON array, one entry per step: the event
// types, the state held after the run (and the client's own agent.state), how many deltas,
// the interrupts, the text, the tool calls, or the error the client raised. The script only observes: every expectation lives in Python.

import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";
import jsonpatch from "fast-json-patch";

const [url, plan] = process.argv.slice(2);
const threads = new Map();
const interrupts = new Map();

function agentFor(step) {
  if (!threads.has(step.thread)) {
    const headers = step.token ? { Authorization: `Bearer ${step.token}` } : {};
    threads.set(step.thread, new HttpAgent({ url, threadId: step.thread, headers }));
  }
  return threads.get(step.thread);
}

async function run(step) {
  const agent = agentFor(step);
  const seen = { types: [], state: null, deltas: 0, interrupts: [], text: "", tools: [] };
  seen.error = null;
  let resume;
  if (step.text !== undefined) {
    agent.addMessage({ id: randomUUID(), role: "user", content: step.text });
  } else {
    const payload = { approved: step.resume === "approve" };
    if (step.reason !== undefined) {
      payload.reason = step.reason;
    }
    resume = [{ interruptId: interrupts.get(step.thread), status: "resolved", payload }];
  }
  try {
    await agent.runAgent(resume ? { resume } : {}, {
      onEvent({ event }) {
        seen.types.push(event.type);
        if (event.type === "STATE_SNAPSHOT") {
          seen.state = structuredClone(event.snapshot);
        } else if (event.type === "STATE_DELTA") {
          seen.deltas += 1;
          seen.state = jsonpatch.applyPatch(seen.state, event.delta, true, false).newDocument;
        } else if (event.type === "TEXT_MESSAGE_CONTENT") {
          seen.text += event.delta;
        } else if (event.type === "TOOL_CALL_START") {
          seen.tools.push(event.toolCallName);
        } else if (event.type === "RUN_FINISHED" && event.outcome?.type === "interrupt") {
          seen.interrupts = event.outcome.interrupts;
          interrupts.set(step.thread, event.outcome.interrupts[0]?.id);
        }
      },
    });
  } catch (err) {
    seen.error = String(err?.message ?? err);
  }
  seen.agentState = agent.state;
  return seen;
}

const results = [];
for (const step of JSON.parse(plan)) {
  results.push(await run(step));
}
console.log(JSON.stringify(results));
