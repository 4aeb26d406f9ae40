// Drive foldkit-agent's MCP server with the official MCP TypeScript SDK client.
//
//   node tests/interop/mcp_client.mjs http://127.0.0.1:PORT/mcp
//   node tests/interop/mcp_client.mjs stdio <command> [args...]
//
// Prints one JSON object describing what the client saw; tests/test_mcp_interop.py checks it.
// The script only observes: every expectation lives in the Python test.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [target, ...rest] = process.argv.slice(2);
const transport =
  target === "stdio"
    ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target));

const client = new Client({ name: "foldkit-interop", version: "0.0.0" });
let listChanged = 0;
let heard;
const firstChange = new Promise((resolve) => (heard = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  listChanged += 1;
  heard();
});

const out = {};
try {
  await client.connect(transport);
  out.protocolVersion = transport.protocolVersion ?? null;
  out.capabilities = client.getServerCapabilities();
  out.toolsBefore = (await client.listTools()).tools.map((t) => t.name);
  // the first todo makes rename/toggle/select available: the server must say so
  out.created = await client.callTool({ name: "create_todo", arguments: { title: "Interop" } });
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("no tools/list_changed within 5 s")), 5000);
  });
  await Promise.race([firstChange, timeout]).finally(() => clearTimeout(timer));
  out.toolsAfter = (await client.listTools()).tools.map((t) => t.name);
  out.refused = await client.callTool({ name: "create_todo", arguments: { title: "x", priority: 1 } });
  out.unknown = await client.callTool({ name: "no_such_tool", arguments: {} });
  out.context = JSON.parse((await client.readResource({ uri: "agent://context" })).contents[0].text);
  out.listChanged = listChanged;
} catch (err) {
  out.error = String(err && err.message ? err.message : err);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
