-- wrk: stateless 2026-07-28-era MCP `tools/call` POSTs of `increment` {"by": 1}, with the
-- headers and body the official `mcp` Python client (2.3.0, mode "2026-07-28") sends:
--   wrk -t1 -c50 -d5s --latency -s bench/lua/tools_call.lua http://127.0.0.1:8000/mcp
-- No Authorization header: the bench servers run without tokens.

wrk.method = "POST"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "increment"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"increment",' ..
  '"arguments":{"by":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
  '"io.modelcontextprotocol/clientInfo":{"name":"mcp","version":"0.1.0"},' ..
  '"io.modelcontextprotocol/clientCapabilities":{}}}}'

dofile(debug.getinfo(1, "S").source:sub(2):gsub("[^/]*$", "") .. "report.lua")
