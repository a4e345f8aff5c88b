"""Drives a saga task tool to completion with the official MCP Python SDK (mcp 2.3): the
migrate example's `approve_migration`, which answers `tools/call` with a task and asks one
form while it works. At 2026-07-28 a client extension claims the `task` result type and
follows the task (`tasks/get`, answering `input_required` with `tasks/update` through the
client's own elicitation callback); at 2025-11-25 the SDK validates `tools/call` as a plain
tool result, so the task's creation is read from the stream. The guide's "Calling saga
tools from the SDKs" chapter includes this file.

    python task.py URL [2026-07-28|2025-11-25]

Exits 0 when the task completes with exactly "3 tables approved".
"""

import sys
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import pydantic
from mcp import Client, types
from mcp.client import ClaimContext, ClientExtension, ResultClaim, advertise
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

# ANCHOR: task
TASKS = "io.modelcontextprotocol/tasks"


class TaskIdParams(types.RequestParams):
    task_id: str


class TaskUpdateParams(types.RequestParams):
    task_id: str
    input_responses: types.InputResponses


class TasksGet(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"  # Mcp-Name: <taskId> (SEP-2663)


class TasksUpdate(types.Request[TaskUpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: TaskUpdateParams
    name_param = "taskId"


class TaskCreated(types.Result):  # the claimed tools/call shape
    result_type: Literal["task"]
    task_id: str
    status: str
    poll_interval_ms: int | None = None


class TaskState(types.Result):  # a tasks/get result
    task_id: str
    status: str
    status_message: str | None = None
    input_requests: types.InputRequests | None = None
    result: types.CallToolResult | None = None
    poll_interval_ms: int | None = None


async def follow(session: Any, task_id: str) -> types.CallToolResult:
    """Polls tasks/get; answers input_required through the client's own callbacks with tasks/update."""
    answered: set[str] = set()
    while True:
        task = await session.send_request(TasksGet(params=TaskIdParams(task_id=task_id)), TaskState)
        if task.status == "input_required":
            responses: types.InputResponses = {}
            for key, req in (task.input_requests or {}).items():
                if key not in answered:
                    ctx = ClientRequestContext(session=session, request_id=key)
                    answer = await session.dispatch_input_request(ctx, req)
                    if isinstance(answer, types.ErrorData):
                        raise RuntimeError(f"declined {key}: {answer}")
                    responses[key] = answer
                    answered.add(key)
            if responses:
                await session.send_request(
                    TasksUpdate(params=TaskUpdateParams(task_id=task_id, input_responses=responses)), types.EmptyResult
                )
                continue
        elif task.status == "completed" and task.result is not None:
            return task.result
        elif task.status != "working":
            raise RuntimeError(f"task {task_id} ended {task.status}: {task.status_message}")
        await anyio.sleep(0.1)


class Tasks(ClientExtension):  # 2026-07-28: Client.call_tool resolves resultType "task" itself
    identifier = TASKS

    def claims(self):
        async def resolve(created: TaskCreated, ctx: ClaimContext) -> types.CallToolResult:
            return await follow(ctx.session, created.task_id)

        return [ResultClaim(result_type="task", model=TaskCreated, resolve=resolve)]


# ANCHOR_END: task


async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    fields = list(params.requested_schema.get("properties") or {})
    return types.ElicitResult(action="accept", content={f: {"approve": True}[f] for f in fields})


async def main(url: str, era: str) -> int:
    raw: list[dict[str, Any]] = []  # 2025: the raw tools/call result, which the SDK refuses
    legacy = era == "2025-11-25"
    async with Client(
        tapped(streamable_http_client(url), raw),
        mode="legacy" if legacy else era,
        elicitation_callback=on_elicit,
        extensions=[advertise(TASKS)] if legacy else [Tasks()],
        client_info=types.Implementation(name="saga-py-driver", version="0.0.0"),
    ) as client:
        if not legacy:
            result = await client.call_tool("approve_migration", {"tables": 3})
        else:
            result = await legacy_call(client, raw)
    text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
    print(repr(text))
    return 0 if text == "3 tables approved" and not result.is_error else 1


async def legacy_call(client: Client, raw: list) -> types.CallToolResult:
    # 2025-11-25: the SDK validates tools/call against the 2025 CallToolResult (content required)
    # before any result type, so the task's creation is read from the tapped stream.
    try:
        return await client.call_tool("approve_migration", {"tables": 3})
    except pydantic.ValidationError:
        created = next(r for r in reversed(raw) if r.get("resultType") == "task")
    return await follow(client.session, created["taskId"])


class TapRead:
    def __init__(self, inner, raw):
        self._inner, self._raw = inner, raw

    async def receive(self):
        item = await self._inner.receive()
        message = getattr(getattr(item, "message", None), "root", getattr(item, "message", None))
        result = getattr(message, "result", None)
        if isinstance(result, dict) and result.get("resultType") == "task":
            self._raw.append(result)
        return item

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self):
        await self._inner.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()

    def __getattr__(self, name):
        return getattr(self._inner, name)


@asynccontextmanager
async def tapped(transport, raw):
    async with transport as (read_stream, write_stream):
        yield TapRead(read_stream, raw), write_stream


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "2026-07-28"))
