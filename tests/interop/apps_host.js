// A minimal MCP Apps host for the browser tests: the official MCP client on the server's
// /mcp, and ext-apps' AppBridge rendering the ui:// resource a tool points at in a sandboxed
// frame. Bundled by tests/adapters/mcp/test_apps_browser.py with esbuild; what the host hears
// (context the view pushes for the model) is kept on window.heard for the test to read.
import {
  AppBridge,
  PostMessageTransport,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const HOST = { name: "foldkit-test-host", version: "1.0.0" };

window.heard = { modelContext: [] };

window.openApp = async (mcpUrl) => {
  const client = new Client(HOST);
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  const { resources } = await client.listResources();
  const { tools } = await client.listTools();
  const uri = getToolUiResourceUri(tools[0]);
  const read = await client.readResource({ uri });
  const content = read.contents[0];

  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-forms");
  frame.title = "app";
  frame.style.cssText = "width: 100%; height: 900px; border: 1px solid #ccc";
  document.body.append(frame);

  const bridge = new AppBridge(client, HOST, {
    serverTools: {},
    serverResources: {},
    updateModelContext: { text: {}, structuredContent: {} },
  });
  bridge.onupdatemodelcontext = async (params) => {
    window.heard.modelContext.push(params);
    return {};
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = content.text;
  await initialized;
  window.bridge = bridge;
  return {
    resources: resources.map((r) => ({ uri: r.uri, mimeType: r.mimeType })),
    tools: tools.map((t) => ({ name: t.name, uri: getToolUiResourceUri(t), appOnly: isToolVisibilityAppOnly(t) })),
    read: { uri: content.uri, mimeType: content.mimeType, csp: content._meta?.ui?.csp ?? null },
  };
};

// What a host does when its model called a tool of this view: hands the view the result.
window.toolResult = async (result) => {
  await window.bridge.sendToolResult(result);
};
