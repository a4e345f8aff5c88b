"""An MCP server over Streamable HTTP (2026-07-28, stateless) that only lists tools, for
saga-cli's tests of `saga tools`: its tools have a title, an output schema and
`execution.taskSupport`, which rmcp's model of a tool drops. It declares the tasks
extension but runs no tool. With LISTING_SSE=1 it
answers tools/list as an SSE stream instead of JSON.

    python3 listing_server.py     # prints "listening on http://127.0.0.1:PORT/mcp"
"""
import http.server
import json
import os

TOOLS = [
    {"name": "plain", "inputSchema": {"type": "object"}},
    {"name": "batch", "title": "Batch job", "description": "Runs long.",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}},
                     "required": ["n"]},
     "outputSchema": {"type": "object", "properties": {"done": {"type": "integer"}},
                      "required": ["done"]},
     "execution": {"taskSupport": "required"}},
    {"name": "maybe", "inputSchema": {"type": "object"},
     "execution": {"taskSupport": "optional"}},
    {"name": "never", "inputSchema": {"type": "object"},
     "execution": {"taskSupport": "forbidden"}},
]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, body=b"", content_type="application/json"):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(405)

    def do_DELETE(self):
        self.reply(405)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        if "id" not in request:
            self.reply(202)
            return
        rid, method = request["id"], request.get("method")
        if method == "server/discover":
            result = {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                      "capabilities": {"tools": {}, "extensions": {
                          "io.modelcontextprotocol/tasks": {}}}, "ttlMs": 0, "cacheScope": "private",
                      "_meta": {"io.modelcontextprotocol/serverInfo":
                                {"name": "listing", "version": "1"}}}
        elif method == "tools/list":
            result = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                      "tools": TOOLS}
        else:
            body = json.dumps({"jsonrpc": "2.0", "id": rid, "error": {
                "code": -32601, "message": "Method not found"}}).encode()
            self.reply(200, body)
            return
        message = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result})
        if method == "tools/list" and os.environ.get("LISTING_SSE"):
            self.reply(200, ("event: message\ndata: " + message + "\n\n").encode(),
                       "text/event-stream")
        else:
            self.reply(200, message.encode())

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("listening on http://127.0.0.1:%d/mcp" % server.server_address[1], flush=True)
server.serve_forever()
