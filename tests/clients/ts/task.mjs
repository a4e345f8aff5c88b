// Drives a saga task tool to completion with the official MCP TypeScript client,
// @modelcontextprotocol/client 2.4: the migrate example's `approve_migration`, which
// answers `tools/call` with a task and asks one form while it works. The SDK has no task
// API of its own, so the client declares the tasks extension and sends `tasks/get` and
// `tasks/update` through its generic `request`; the guide's "Calling saga tools from the
// SDKs" chapter includes this file.
//
//   node task.mjs URL [2026-07-28|2025-11-25]
//
// Exits 0 when the task completes with exactly "3 tables approved".

import { Client, SdkError, SdkErrorCode, StreamableHTTPClientTransport, specTypeSchemas } from '@modelcontextprotocol/client';

const [url, era = '2026-07-28'] = process.argv.slice(2);
const legacy = era === '2025-11-25';

// ANCHOR: task
const TASKS = 'io.modelcontextprotocol/tasks';
// A result schema that keeps every field: `taskId`, `status`, `inputRequests`, `result`.
const Any = specTypeSchemas.Result;

// An `elicitation/create` the task asks, answered as the person would.
function answer(request) {
    if (request.method !== 'elicitation/create') throw new Error(`unexpected ${request.method}`);
    return { action: 'accept', content: { approve: true } };
}

const client = new Client({ name: 'saga-task-driver', version: '0.0.0' }, {
    capabilities: { elicitation: { form: {} }, extensions: { [TASKS]: {} } },
    versionNegotiation: { mode: legacy ? 'legacy' : { pin: era } },
});
const transport = new StreamableHTTPClientTransport(new URL(url));
// At 2026-07-28 the SDK refuses a `tools/call` result of `resultType: "task"` before any
// schema sees it (UNSUPPORTED_RESULT_TYPE, without the task's id), so the response is
// read as it arrives.
const created = new Map();
let onmessage;
Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => onmessage,
    set: handler => {
        onmessage = typeof handler !== 'function' ? handler : (message, extra) => {
            if (message?.result?.resultType === 'task') created.set(message.id, message.result);
            return handler(message, extra);
        };
    },
});
await client.connect(transport);

let task;
try {
    task = await client.request(
        { method: 'tools/call', params: { name: 'approve_migration', arguments: { tables: 3 } } }, Any);
} catch (error) {
    if (!(error instanceof SdkError && error.code === SdkErrorCode.UnsupportedResultType)) throw error;
    task = [...created.values()].at(-1);
}
const taskId = task.taskId;
const answered = new Set();
for (;;) {
    task = await client.request({ method: 'tasks/get', params: { taskId } }, Any);
    if (task.status === 'input_required') {
        const inputResponses = {};
        for (const [key, request] of Object.entries(task.inputRequests ?? {})) {
            if (!answered.has(key)) {
                inputResponses[key] = answer(request);
                answered.add(key);
            }
        }
        if (Object.keys(inputResponses).length > 0) {
            await client.request({ method: 'tasks/update', params: { taskId, inputResponses } }, Any);
            continue;
        }
    } else if (task.status !== 'working') {
        break;
    }
    await new Promise(resolve => setTimeout(resolve, Math.min(task.pollIntervalMs ?? 100, 100)));
}
await client.close();
if (task.status !== 'completed') throw new Error(`the task ended ${task.status}: ${JSON.stringify(task)}`);
const text = task.result.content.filter(block => block.type === 'text').map(block => block.text).join('');
// ANCHOR_END: task
console.log(JSON.stringify(text));
process.exit(text === '3 tables approved' ? 0 : 1);
