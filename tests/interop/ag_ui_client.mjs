// Drive foldkit-agent's AG-UI app with the official AG-UI client (@ag-ui/client), applying
// the shared state with fast-json-patch as a front end does.
//
//   node tests/interop/ag_ui_client.mjs http://127.0.0.1:PORT/
//
// Three runs on one thread: "add eggs"; "remove the first" (ends in an interrupt), resumed with
// a decline and a reason; "remove the first" again, resumed with an approval. Prints one JSON
// object of what the client saw; tests/adapters/pydantic_ai/test_ag_ui_interop.py checks it.
// The script only observes: every expectation lives in Python.

import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";
import jsonpatch from "fast-json-patch";

const agent = new HttpAgent({ url: process.argv[2], threadId: "thread-1" });

async function run(text, resume) {
  const seen = { types: [], state: null, deltas: 0, interrupts: [], text: "" };
  if (text !== null) {
    agent.addMessage({ id: randomUUID(), role: "user", content: text });
  }
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
      } else if (event.type === "RUN_FINISHED" && event.outcome?.type === "interrupt") {
        seen.interrupts = event.outcome.interrupts;
      }
    },
  });
  seen.agentState = agent.state;
  return seen;
}

const added = await run("add eggs");
const asked = await run("remove the first");
const interrupt = asked.interrupts[0]?.id;
const declined = await run(null, [
  { interruptId: interrupt, status: "resolved", payload: { approved: false, reason: "keep the milk" } },
]);
const askedAgain = await run("remove the first");
const approved = await run(null, [
  { interruptId: askedAgain.interrupts[0]?.id, status: "resolved", payload: { approved: true } },
]);
console.log(JSON.stringify({ added, asked, declined, askedAgain, approved }));
