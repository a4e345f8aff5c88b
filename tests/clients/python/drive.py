"""Drives a saga example (deploy, weather or research) to completion with the official MCP Python SDK,
PyPI `mcp` 2.3, through scripted elicitation and sampling callbacks. At protocol 2026-07-28
(`Client(..., mode="2026-07-28")`) `Client.call_tool` fulfils `input_required` rounds; in
the 2025 mode (`mode="legacy"`: `initialize` and a session) the server sends the same
requests during the call.

    python drive.py --http http://127.0.0.1:PORT/mcp --tool deploy|weather|research [--era 2026-07-28|2025-11-25]
    python drive.py --stdio /path/to/binary --tool deploy|weather|research [--era …]

Exits 0 when the final text is exactly the expected one, non-zero otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp import types
from mcp.client.context import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

SCENARIOS: dict[str, dict[str, Any]] = {
    "deploy": {
        "tool": "complex_tool",
        "args": {"initial_arg": "value"},
        # One input request per round: first the form, then the LLM check.
        "rounds": [["elicitation/create"], ["sampling/createMessage"]],
        "keys": None,  # the server's choice
        "expected": "Deployment to production initiated successfully based on confirmation.",
    },
    "weather": {
        "tool": "get_weather",
        "args": {"location": "New York"},
        # One round with both requests at once, under the keys the tool chose.
        "rounds": [["elicitation/create", "sampling/createMessage"]],
        "keys": [["github_login", "capital_of_france"]],
        "expected": "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy",
    },
    "research": {
        "tool": "research",
        "args": {"question": "What is MRTR?"},
        # An agent loop, the client's LLM offered tools (sampling.tools): two searches at
        # once, then a question for the person, then the answer.
        "rounds": [
            ["sampling/createMessage"],
            ["sampling/createMessage"],
            ["elicitation/create"],
            ["sampling/createMessage"],
        ],
        "keys": None,
        "expected": "Answer: mrtr: MCP 2026-07-28 answers input_required with the requests and an opaque "
        "requestState. | saga: saga compiles one async function into a state machine sealed into the "
        "client's token. | durability",
    },
}

ELICIT_ANSWERS = {"target": "production", "name": "octocat", "answer": "durability"}


# ANCHOR: agent_turn
def agent_turn(params: types.CreateMessageRequestParams) -> types.CreateMessageResultWithTools:
    """The client's LLM as a small agent when the request offers tools: two searches at once
    (parallel tool uses), then `ask_user`, then an answer made of every tool result's text."""
    names = [tool.name for tool in params.tools or []]
    if "search" not in names or "ask_user" not in names:
        raise RuntimeError(f"unexpected tools {names}")
    blocks = [block for message in params.messages for block in message.content_as_list]
    results = [block for block in blocks if isinstance(block, types.ToolResultContent)]
    if not results:
        first = params.messages[0].content_as_list
        question = "".join(c.text for c in first if isinstance(c, types.TextContent))
        content: list[Any] = [
            types.ToolUseContent(type="tool_use", id="py-1", name="search", input={"query": question}),
            types.ToolUseContent(type="tool_use", id="py-2", name="search", input={"query": "saga"}),
        ]
    elif len(results) == 2:
        content = [
            types.ToolUseContent(
                type="tool_use", id="py-3", name="ask_user", input={"question": "Which part matters most to you?"}
            )
        ]
    else:
        texts = ["".join(c.text for c in result.content if isinstance(c, types.TextContent)) for result in results]
        return types.CreateMessageResultWithTools(
            role="assistant",
            content=types.TextContent(type="text", text="Answer: " + " | ".join(texts)),
            model="scripted-agent",
            stop_reason="endTurn",
        )
    return types.CreateMessageResultWithTools(
        role="assistant", content=content, model="scripted-agent", stop_reason="toolUse"
    )
# ANCHOR_END: agent_turn
SAMPLE_ANSWERS = {
    "Is deploying to 'production' safe right now?": "Yes, all systems are green.",
    "What is the capital of France?": "The capital of France is Paris.",
}


def log(text: str) -> None:
    print(f"[py] {text}", file=sys.stderr, flush=True)


def as_dict(message: Any) -> dict[str, Any]:
    """A JSON-RPC message (pydantic model, possibly a RootModel) as plain JSON."""
    if hasattr(message, "model_dump"):
        dumped = message.model_dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(dumped, dict):
            return dumped
    root = getattr(message, "root", None)
    if root is not None:
        return as_dict(root)
    return {}


class Wire:
    """What went over the transport, as seen from the client."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.input_required: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []

    def outgoing(self, item: Any) -> None:
        msg = as_dict(getattr(item, "message", item))
        if msg.get("method") == "tools/call":
            self.calls.append(msg.get("params") or {})

    def incoming(self, item: Any) -> None:
        if isinstance(item, Exception):
            return
        result = as_dict(getattr(item, "message", item)).get("result")
        if isinstance(result, dict):
            if result.get("resultType") == "input_required":
                self.input_required.append(result)
            elif isinstance(result.get("content"), list):
                self.results.append(result)


class TapRead:
    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner, self._wire = inner, wire

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._wire.incoming(item)
        return item

    def __aiter__(self) -> TapRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> TapRead:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:  # last_context and the like
        return getattr(self._inner, name)


class TapWrite:
    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner, self._wire = inner, wire

    async def send(self, item: Any, /) -> None:
        self._wire.outgoing(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> TapWrite:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@asynccontextmanager
async def tapped(transport: Any, wire: Wire):
    """The SDK's own transport, with its streams watched (not changed)."""
    async with transport as (read_stream, write_stream):
        yield TapRead(read_stream, wire), TapWrite(write_stream, wire)


def same_set(a: list[str], b: list[str]) -> bool:
    return sorted(a) == sorted(b)


def check_rounds(scenario: dict[str, Any], wire: Wire, handled: list[str]) -> list[str]:
    problems = []
    n = len(scenario["rounds"])
    if len(wire.input_required) != n:
        problems.append(f"got {len(wire.input_required)} input_required results, expected {n}")
    if len(wire.calls) != n + 1:
        problems.append(f"sent {len(wire.calls)} tools/call legs, expected {n + 1}")
    for i, ir in enumerate(wire.input_required[:n]):
        requests = ir.get("inputRequests") or {}
        keys = list(requests)
        methods = [requests[k].get("method") for k in keys]
        if not same_set(methods, scenario["rounds"][i]):
            problems.append(f"round {i + 1} asked {methods}, expected {scenario['rounds'][i]}")
        if scenario["keys"] and not same_set(keys, scenario["keys"][i]):
            problems.append(f"round {i + 1} keys {keys}, expected {scenario['keys'][i]}")
        if not isinstance(ir.get("requestState"), str) or not ir["requestState"]:
            problems.append(f"round {i + 1} has no requestState")
        if i + 1 < len(wire.calls):
            retry = wire.calls[i + 1]
            if retry.get("requestState") != ir.get("requestState"):
                problems.append(f"retry {i + 1} did not echo requestState")
            answered = list(retry.get("inputResponses") or {})
            if not same_set(answered, keys):
                problems.append(f"retry {i + 1} answered {answered}, asked {keys}")
            log(f"leg {i + 2}: inputResponses {json.dumps(retry.get('inputResponses'))}")
    asked = [k for ir in wire.input_required for k in (ir.get("inputRequests") or {})]
    if not same_set(handled, asked):
        problems.append(f"callbacks saw keys {handled}, server asked {asked}")
    if len(wire.results) != 1:
        problems.append(f"got {len(wire.results)} complete results, expected 1")
    return problems


def check_session(scenario: dict[str, Any], wire: Wire, handled_methods: list[str]) -> list[str]:
    """In a session the server asks during the one call: every request reaches a callback."""
    problems = []
    if wire.input_required:
        problems.append(f"got {len(wire.input_required)} input_required results in a session")
    if len(wire.calls) != 1:
        problems.append(f"sent {len(wire.calls)} tools/call requests, expected 1")
    expected = [m for round_ in scenario["rounds"] for m in round_]
    if not same_set(handled_methods, expected):
        problems.append(f"callbacks saw {handled_methods}, expected {expected}")
    if len(wire.results) != 1:
        problems.append(f"got {len(wire.results)} complete results, expected 1")
    return problems


async def run(opts: argparse.Namespace) -> int:
    scenario = SCENARIOS[opts.tool]
    wire = Wire()
    handled: list[str] = []
    handled_methods: list[str] = []

    # ANCHOR: elicit
    async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        handled.append(str(context.request_id))
        handled_methods.append("elicitation/create")
        log(f"elicitation {context.request_id}: {params.model_dump_json(by_alias=True, exclude_none=True)}")
        if not isinstance(params, types.ElicitRequestFormParams):
            raise RuntimeError(f"expected a form elicitation, got {type(params).__name__}")
        fields = list((params.requested_schema.get("properties") if isinstance(params.requested_schema, dict)
                       else params.requested_schema.properties) or {})
        if not fields:
            raise RuntimeError("elicitation without fields")
        unknown = [f for f in fields if f not in ELICIT_ANSWERS]
        if unknown:
            raise RuntimeError(f"unexpected elicitation fields {unknown}")
        return types.ElicitResult(action="accept", content={f: ELICIT_ANSWERS[f] for f in fields})
    # ANCHOR_END: elicit

    # ANCHOR: sample
    async def on_sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools:
        handled.append(str(context.request_id))
        handled_methods.append("sampling/createMessage")
        log(f"sampling {context.request_id}: {params.model_dump_json(by_alias=True, exclude_none=True)}")
        if params.tools:
            return agent_turn(params)
        last = params.messages[-1]
        prompt = "".join(c.text for c in last.content_as_list if isinstance(c, types.TextContent))
        answer = SAMPLE_ANSWERS.get(prompt)
        if answer is None:
            raise RuntimeError(f"unexpected sampling prompt {prompt!r}")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=answer),
            model="scripted-model",
            stop_reason="endTurn",
        )
    # ANCHOR_END: sample

    if opts.http:
        transport = streamable_http_client(opts.http)
    else:
        env = {k: os.environ[k] for k in ("SAGA_KEYS", "RUST_LOG") if k in os.environ}
        transport = stdio_client(StdioServerParameters(command=opts.stdio, args=["--stdio"], env=env))

    # ANCHOR: call
    async with Client(
        tapped(transport, wire),
        mode="legacy" if opts.era == "2025-11-25" else "2026-07-28",
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        sampling_capabilities=types.SamplingCapability(tools=types.SamplingToolsCapability()),
        # The SDK gives up after 10 rounds by default (InputRequiredRoundsExceededError): an
        # agent loop of more turns (each turn is a round) needs more.
        input_required_max_rounds=50,
        client_info=types.Implementation(name="saga-py-driver", version="0.0.0"),
    ) as client:
        version = client.session.protocol_version
        log(f"connected: version={version}")
        result = await client.call_tool(scenario["tool"], scenario["args"])
        log(f"result: {result.model_dump_json(by_alias=True, exclude_none=True)}")
    # ANCHOR_END: call

    problems = []
    if version != opts.era:
        problems.append(f"negotiated {version}, wanted {opts.era}")
    text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
    if result.is_error:
        problems.append("result.isError is true")
    if text != scenario["expected"]:
        problems.append(f"final text {text!r} != expected {scenario['expected']!r}")
    if opts.era == "2025-11-25":
        problems += check_session(scenario, wire, handled_methods)
    else:
        problems += check_rounds(scenario, wire, handled)
    if problems:
        for p in problems:
            log(f"FAIL: {p}")
        return 1
    print(json.dumps(text, ensure_ascii=False))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--http", metavar="URL")
    where.add_argument("--stdio", metavar="BINARY")
    parser.add_argument("--tool", choices=sorted(SCENARIOS), required=True)
    parser.add_argument("--era", choices=["2026-07-28", "2025-11-25"], default="2026-07-28")
    opts = parser.parse_args()
    try:
        return anyio.run(run, opts)
    except BaseException as error:  # noqa: BLE001 - report anything, exit non-zero
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        import traceback

        traceback.print_exception(error)
        log(f"error: {error!r}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
