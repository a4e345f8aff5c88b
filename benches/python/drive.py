"""Load driver for the deploy saga over MCP 2026-07-28 Streamable HTTP (stateless).

Runs N complete sagas (three `tools/call` rounds each) with C concurrent virtual users
against URL and prints one JSON line: {"sagas", "seconds", "sagas_per_s", ...}.

Each virtual user holds one keep-alive HTTP/1.1 connection and runs sagas back to
back. The client is a minimal HTTP/1.1 writer/reader on asyncio streams (uvloop when
installed), so the driver costs as little CPU as possible on a shared machine; the
same driver, unchanged, drives both servers.

Every round is checked: round 1 must ask one `elicitation/create` with the message
"Please provide the deployment target:" and a form with a string `target`; round 2
must ask one `sampling/createMessage` whose user text is
"Is deploying to 'production' safe right now?"; round 3 must complete with
"Deployment to production initiated successfully based on confirmation.". The keys
of `inputRequests` are the server's own (saga: `elicit-1`, `sample-2`; the Python
SDK: its resolvers' `module:qualname`); answers go back under the same keys.

Usage: drive.py URL --sagas N --concurrency C [--meta JSON] [--header NAME:VALUE] [--show]

`--meta '{"progressToken": "p"}'` adds those keys to every request's `_meta` (a call that
asks for progress or log messages; the deploy saga sends none, so its answers stay JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from urllib.parse import urlsplit

PROTOCOL_VERSION = "2026-07-28"
TOOL = "complex_tool"
ELICIT_MESSAGE = "Please provide the deployment target:"
SAMPLE_TEXT = "Is deploying to 'production' safe right now?"
DONE_TEXT = "Deployment to production initiated successfully based on confirmation."
# Headers added to every request (`--header NAME:VALUE`).
EXTRA_HEADERS: list[tuple[str, str]] = []
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
}
ELICIT_ANSWER = {"action": "accept", "content": {"target": "production"}}
SAMPLE_ANSWER = {"role": "assistant", "content": {"type": "text", "text": "Yes."}, "model": "m"}


SHOW = False
# `--list`: each saga begins with a `tools/list`, as a client that has not listed yet does.
LIST_FIRST = False


class SagaFailed(Exception):
    pass


class Connection:
    """One keep-alive HTTP/1.1 connection; POSTs JSON and returns the parsed body."""

    def __init__(self, host: str, port: int, path: str) -> None:
        self.host, self.port, self.path = host, port, path
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        common = (
            f"POST {path} HTTP/1.1\r\n"
            f"host: {host}:{port}\r\n"
            "content-type: application/json\r\n"
            "accept: application/json, text/event-stream\r\n"
            f"mcp-protocol-version: {PROTOCOL_VERSION}\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in EXTRA_HEADERS)
        )
        # SEP-2243's headers, per method: made once, not per request.
        self.heads = {
            "tools/call": (common + f"mcp-method: tools/call\r\nmcp-name: {TOOL}\r\n").encode(),
            "tools/list": (common + "mcp-method: tools/list\r\n").encode(),
        }

    async def post(self, body: dict) -> dict:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        data = json.dumps(body, separators=(",", ":")).encode()
        if SHOW:
            print(f"--> {data.decode()}", file=sys.stderr)
        self.writer.write(self.heads[body["method"]] + b"content-length: %d\r\n\r\n" % len(data) + data)
        assert self.reader is not None
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if line:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            payload = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            payload = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                payload += chunk[:-2]
        else:
            raise SagaFailed(f"response without length: {headers}")
        if headers.get("connection", "").lower() == "close":
            self.close()
        if status != 200:
            raise SagaFailed(f"HTTP {status}: {payload[:300]!r}")
        ctype = headers.get("content-type", "")
        if not ctype.startswith("application/json"):
            raise SagaFailed(f"unexpected content-type {ctype!r}: {payload[:300]!r}")
        if SHOW:
            print(f"<-- {payload.decode()}", file=sys.stderr)
        return json.loads(payload)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def call(rid: int, responses: dict | None, state: str | None) -> dict:
    params: dict = {"name": TOOL, "arguments": {"initial_arg": "bench"}, "_meta": META}
    if responses is not None:
        params["inputResponses"] = responses
    if state is not None:
        params["requestState"] = state
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def result_of(response: dict) -> dict:
    if "result" not in response:
        raise SagaFailed(f"error response: {json.dumps(response)[:300]}")
    return response["result"]


def only_request(result: dict, method: str) -> tuple[str, dict]:
    if result.get("resultType") != "input_required":
        raise SagaFailed(f"expected input_required, got {json.dumps(result)[:300]}")
    requests = result.get("inputRequests") or {}
    if len(requests) != 1:
        raise SagaFailed(f"expected one input request, got {list(requests)}")
    ((key, request),) = requests.items()
    if request.get("method") != method:
        raise SagaFailed(f"expected {method}, got {request.get('method')}")
    if not isinstance(result.get("requestState"), str):
        raise SagaFailed("input_required without requestState")
    return key, request["params"]


def list_tools(rid: int) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {"_meta": META}}


async def saga(conn: Connection, rid: int, keys: set[str]) -> None:
    if LIST_FIRST:
        listed = result_of(await conn.post(list_tools(rid)))
        if not any(tool.get("name") == TOOL for tool in listed.get("tools", [])):
            raise SagaFailed(f"{TOOL} is not listed: {json.dumps(listed)[:300]}")
    r1 = result_of(await conn.post(call(rid, None, None)))
    k1, p1 = only_request(r1, "elicitation/create")
    schema = p1.get("requestedSchema", {})
    if p1.get("message") != ELICIT_MESSAGE or schema.get("properties", {}).get("target", {}).get("type") != "string":
        raise SagaFailed(f"unexpected elicitation: {json.dumps(p1)}")
    r2 = result_of(await conn.post(call(rid + 1, {k1: ELICIT_ANSWER}, r1["requestState"])))
    k2, p2 = only_request(r2, "sampling/createMessage")
    text = p2.get("messages", [{}])[0].get("content", {}).get("text")
    if text != SAMPLE_TEXT:
        raise SagaFailed(f"unexpected sampling request: {json.dumps(p2)}")
    r3 = result_of(await conn.post(call(rid + 2, {k2: SAMPLE_ANSWER}, r2["requestState"])))
    if r3.get("resultType", "complete") != "complete" or r3.get("isError"):
        raise SagaFailed(f"expected complete, got {json.dumps(r3)[:300]}")
    content = r3.get("content") or [{}]
    if content[0].get("text") != DONE_TEXT:
        raise SagaFailed(f"unexpected final text: {json.dumps(r3)[:300]}")
    keys.add(k1)
    keys.add(k2)


async def run(url: str, sagas: int, concurrency: int) -> dict:
    parts = urlsplit(url)
    host, port, path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path or "/"
    remaining = sagas
    done = 0
    keys: set[str] = set()

    async def user(index: int) -> None:
        nonlocal remaining, done
        conn = Connection(host, port, path)
        rid = index * 10_000_000
        try:
            while remaining > 0:
                remaining -= 1
                await saga(conn, rid, keys)
                rid += 3
                done += 1
        finally:
            conn.close()

    start = time.perf_counter()
    await asyncio.gather(*(user(i) for i in range(concurrency)))
    seconds = time.perf_counter() - start
    return {
        "sagas": done,
        "seconds": round(seconds, 3),
        "sagas_per_s": round(done / seconds, 1),
        "requests": done * (4 if LIST_FIRST else 3),
        "concurrency": concurrency,
        "input_request_keys": sorted(keys),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--sagas", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--meta", default="{}", help="a JSON object merged into every request's _meta")
    parser.add_argument("--header", action="append", default=[], help="NAME:VALUE added to every request")
    parser.add_argument("--list", action="store_true", help="begin each saga with a tools/list")
    parser.add_argument("--show", action="store_true", help="print every request and response to stderr")
    args = parser.parse_args()
    for header in args.header:
        name, _, value = header.partition(":")
        EXTRA_HEADERS.append((name.strip(), value.strip()))
    extra = json.loads(args.meta)
    if not isinstance(extra, dict):
        parser.error("--meta is a JSON object")
    META.update(extra)
    try:
        import uvloop  # type: ignore[import-not-found]

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    global SHOW, LIST_FIRST
    SHOW = args.show
    LIST_FIRST = args.list
    try:
        report = runner(run(args.url, args.sagas, max(1, min(args.concurrency, args.sagas))))
    except (SagaFailed, OSError, asyncio.IncompleteReadError) as error:
        print(f"drive.py: saga failed against {args.url}: {error}", file=sys.stderr)
        return 1
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
