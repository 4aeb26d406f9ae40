// One agent run on the MCP TypeScript SDK's Client (the SDK has no agent loop of its own, so
// a scripted loop stands in for the model): list the tools once, as an agent built on the
// SDK does before its first turn, then at each turn call the plan's next tool if the listed
// tools have it (a model can only call what it was offered). Prints one JSON line:
//   {"offered": [[...]], "results": [{"tool", "error", "text"}...], "text": "..."}
//   node tests/interop/ts_sdk_agent.mjs http://127.0.0.1:PORT/mcp
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const plan = [
  ["delete_todo", {}], // before a todo is selected: refused
  ["select_todo", { id: "t1" }],
  ["delete_todo", {}],
];
const client = new Client({ name: "foldkit-field-check", version: "0.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
const listed = (await client.listTools()).tools.map((t) => t.name);
const offered = [];
const results = [];
let text = "done";
for (const [name, args] of plan) {
  offered.push([...listed].sort());
  if (!listed.includes(name)) {
    text = `tool not found: ${name}`;
    break;
  }
  const result = await client.callTool({ name, arguments: args });
  const said = result.content.map((c) => c.text ?? "").join("");
  results.push({ tool: name, error: result.isError === true, text: said });
}
await client.close();
process.stdout.write(JSON.stringify({ offered, results, text }) + "\n");
