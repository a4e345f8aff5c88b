"""The deploy saga written with the official MCP Python SDK's documented MRTR API.

The Python peer of `examples/deploy.rs` for `scripts/bench-python.sh`: the same tool
(`complex_tool(initial_arg)`), the same three rounds over MCP 2026-07-28
(multi-round-trip requests, no session):

1. `tools/call` -> `input_required` with a form elicitation asking for `{target}`;
2. retry with the answer + `requestState` -> `input_required` with a
   `sampling/createMessage` asking "Is deploying to '<target>' safe right now?";
3. retry with the sampled answer -> complete with
   "Deployment to <target> initiated successfully based on confirmation.".

It uses the SDK's dependency form (docs: "Dependencies" and "Multi-round-trip
requests"): `Annotated[T, Resolve(fn)]` parameters whose resolvers return
`Elicit(...)` / `Sample(...)`; the SDK builds the `InputRequiredResult`, keeps the
answers in `requestState`, and `MCPServer`'s built-in `RequestStateBoundary` seals
every outgoing `requestState` (AES-256-GCM, here under a fixed key via
`RequestStateSecurity(keys=[...])`, as a multi-worker deployment must) and verifies
every echo. Served as a stateless Streamable HTTP app with JSON responses by
uvicorn, one worker process.

Usage: server.py PORT [HOST]

uvicorn picks uvloop and httptools when installed (requirements.txt pins them, as
`uvicorn[standard]` would); with UVICORN_PLAIN=1 it runs on asyncio's loop and h11
instead, as a bare `pip install uvicorn` would.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import uvicorn
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

from mcp.server import MCPServer
from mcp.server.mcpserver import Elicit, RequestStateSecurity, Resolve, Sample

# A fixed 32-byte secret, like the saga server's SAGA_KEYS in the bench.
KEY = bytes([7]) * 32

mcp = MCPServer(
    "deploy-server",
    version="0.1.0",
    request_state_security=RequestStateSecurity(keys=[KEY], ttl=600.0),
    log_level="WARNING",
)


class Target(BaseModel):
    """The deployment target the user is asked for."""

    target: str


async def ask_target() -> Elicit[Target]:
    return Elicit("Please provide the deployment target:", Target)


async def ask_verdict(target: Annotated[Target, Resolve(ask_target)]) -> Sample:
    prompt = f"Is deploying to '{target.target}' safe right now?"
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=100,
    )


@mcp.tool()
async def complex_tool(
    initial_arg: str,
    target: Annotated[Target, Resolve(ask_target)],
    verdict: Annotated[CreateMessageResult, Resolve(ask_verdict)],
    replicas: int | None = None,
) -> str:
    """Deploys a service after confirming with the user and an LLM."""
    text = verdict.content.text if verdict.content.type == "text" else ""
    if not text.startswith("Yes"):
        return "Deployment postponed."
    return f"Deployment to {target.target} initiated successfully based on confirmation."


app = mcp.streamable_http_app(stateless_http=True, json_response=True)


def main() -> None:
    port = int(sys.argv[1])
    host = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    print(f"listening on http://{host}:{port}/mcp", flush=True)
    # One worker process: uvicorn serves in this process (no supervisor, no reload).
    plain = os.environ.get("UVICORN_PLAIN") == "1"
    uvicorn.run(
        app,
        host=host,
        port=port,
        workers=1,
        log_level="warning",
        access_log=False,
        loop="asyncio" if plain else "auto",
        http="h11" if plain else "auto",
    )


if __name__ == "__main__":
    main()
