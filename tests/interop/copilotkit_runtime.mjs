// CopilotKit's runtime (@copilotkit/runtime, pinned in tests/interop) in front of foldkit-agent's
// AG-UI route, configured and nothing more: one agent, an HttpAgent at serve's /ag-ui URL with
// the bearer token in its headers. Listens on a free loopback port and prints "PORT <n>".
//
//   node tests/interop/copilotkit_runtime.mjs http://127.0.0.1:PORT/ag-ui TOKEN

import { createServer } from "node:http";
import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";

const [url, token] = process.argv.slice(2);
const runtime = new CopilotRuntime({
  agents: { todo: new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` } }) },
});
const listener = createCopilotNodeListener({
  runtime,
  basePath: "/api/copilotkit",
  activateChannels: false,
});
const server = createServer(listener).listen(0, "127.0.0.1", () => {
  console.log(`PORT ${server.address().port}`);
});
