-- The deploy saga's first round, as a 2026-07-28 client sends it; AUTH (env) is the
-- Authorization header value, when set.
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["accept"] = "application/json, text/event-stream"
wrk.headers["mcp-protocol-version"] = "2026-07-28"
wrk.headers["mcp-method"] = "tools/call"
wrk.headers["mcp-name"] = "complex_tool"
local auth = os.getenv("AUTH")
if auth and auth ~= "" then wrk.headers["authorization"] = auth end
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"complex_tool","arguments":{"initial_arg":"v"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}}}}}'
local bad = 0
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, "input_required", 1, true) then bad = bad + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("non-200-or-not-input_required: %d\n", bad))
end
