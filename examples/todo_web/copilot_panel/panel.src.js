// The copilot panel's script: the person's question goes to the AG-UI route as a run of the
// official AG-UI client (@ag-ui/client's HttpAgent), and the panel shows what the run did:
// each tool call with its arguments and answer, the copilot's reply, a delete waiting for the
// person's approval, and the todo list as the shared state the copilot reads.
//
// Bundled into panel.js by `make copilot-panel` (esbuild, the package pinned in tests/interop);
// tests/examples/test_copilot_panel.py rebuilds it and compares.

import { HttpAgent } from "@ag-ui/client";

const $ = (id) => document.getElementById(id);
const agent = new HttpAgent({ url: "/copilot/run", threadId: crypto.randomUUID() });
let waiting = null; // the interrupt a person is asked to answer

function line(kind, text) {
  const item = document.createElement("li");
  item.className = kind;
  item.textContent = text;
  $("log").append(item);
  return item;
}

function showState(state) {
  const list = $("todos");
  list.replaceChildren();
  for (const todo of state?.todos ?? []) {
    const item = document.createElement("li");
    item.dataset.id = todo.id;
    item.textContent = `${todo.id}: ${todo.title}${todo.completed ? " (done)" : ""}`;
    if (todo.id === state.selected_todo_id) item.classList.add("selected");
    list.append(item);
  }
}

function showApproval(interrupt) {
  waiting = interrupt;
  $("approval").hidden = interrupt === null;
  $("approval-text").textContent = interrupt?.metadata?.text ?? "";
}

async function run(input) {
  const calls = new Map();
  let reply = null;
  $("ask").disabled = true;
  try {
    await agent.runAgent(input, {
      onEvent({ event }) {
        if (event.type === "TOOL_CALL_START") {
          const shown = line("tool-call", `${event.toolCallName}()`);
          calls.set(event.toolCallId, { name: event.toolCallName, args: "", shown });
        } else if (event.type === "TOOL_CALL_ARGS") {
          calls.get(event.toolCallId).args += event.delta;
        } else if (event.type === "TOOL_CALL_END") {
          const call = calls.get(event.toolCallId);
          call.shown.textContent = `${call.name}(${call.args})`;
        } else if (event.type === "TOOL_CALL_RESULT") {
          line("tool-result", event.content);
        } else if (event.type === "TEXT_MESSAGE_START") {
          reply = null;
        } else if (event.type === "TEXT_MESSAGE_CONTENT") {
          reply ??= line("reply", "");
          reply.textContent += event.delta;
        } else if (event.type === "RUN_FINISHED") {
          const interrupts = event.outcome?.type === "interrupt" ? event.outcome.interrupts : [];
          showApproval(interrupts[0] ?? null);
        }
      },
      onStateChanged({ state }) {
        showState(state);
      },
    });
  } catch (err) {
    line("error", `The copilot could not answer: ${err?.message ?? err}`);
  } finally {
    $("ask").disabled = false;
  }
}

$("question").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("said").value.trim();
  if (!text) return;
  $("said").value = "";
  line("asked", text);
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
  run({});
});

for (const [button, approved] of [["approve", true], ["decline", false]]) {
  $(button).addEventListener("click", () => {
    const interrupt = waiting;
    showApproval(null);
    line("answered", approved ? "You approved." : "You declined.");
    const payload = { approved };
    run({ resume: [{ interruptId: interrupt.id, status: "resolved", payload }] });
  });
}
