// One Vercel AI SDK agent run against an MCP server: the SDK's MCP client lists the tools
// once (client.tools(), as every AI SDK app does before generateText), then a scripted model
// (the SDK's own MockLanguageModelV4) selects todo t1 and deletes it. Prints one JSON line:
//   {"listed": [...], "results": [{"tool", "error", "output"}...], "text": "..."}
// or, when the run ends on an error, {"listed": [...], "error": "<name>: <message>"}.
//   node tests/interop/ai_sdk_agent.mjs http://127.0.0.1:PORT/mcp
import { createMCPClient } from "@ai-sdk/mcp";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";

const url = process.argv[2];
const client = await createMCPClient({ transport: { type: "http", url } });
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const plan = [
  ["select_todo", { id: "t1" }],
  ["delete_todo", {}],
];
let turn = 0;
const model = new MockLanguageModelV4({
  doGenerate: async () => {
    const step = plan[turn];
    turn += 1;
    if (step === undefined) {
      return {
        content: [{ type: "text", text: "done" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      };
    }
    const [toolName, input] = step;
    return {
      content: [
        { type: "tool-call", toolCallId: `call-${turn}`, toolName, input: JSON.stringify(input) },
      ],
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage,
      warnings: [],
    };
  },
});
let listed = [];
try {
  const tools = await client.tools();
  listed = Object.keys(tools);
  const run = await generateText({
    model,
    tools,
    prompt: "Select the todo t1, then delete it.",
    stopWhen: stepCountIs(5),
  });
  const results = [];
  for (const step of run.steps) {
    for (const part of step.content) {
      if (part.type === "tool-result" || part.type === "tool-error") {
        results.push({
          tool: part.toolName,
          error: part.type === "tool-error",
          output: part.type === "tool-error" ? String(part.error) : part.output,
        });
      }
    }
  }
  console.log(JSON.stringify({ listed, results, text: run.text }));
} catch (err) {
  // what the SDK raises for a tool it did not list (NoSuchToolError) ends the run
  console.log(JSON.stringify({ listed, error: `${err.name}: ${err.message}` }));
} finally {
  await client.close();
}
