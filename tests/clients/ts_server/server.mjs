// A small MCP server written with the official TypeScript SDK's server package
// (npm @modelcontextprotocol/server), for testing the `saga` CLI against a server that
// saga did not write. Run by scripts/cli-ts-server.sh.
//
//   node server.mjs PORT        # Streamable HTTP on http://127.0.0.1:PORT/mcp
//   node server.mjs --stdio     # stdio
//
// Tools:
//   echo         a plain tool: returns its `text` argument
//   order_pizza  elicits a form (a string, an enum, a number with min/max) and returns a
//                sentence built from the answers
//   summarize    asks the client for a sampling (sampling/createMessage) and returns the
//                model's text
//
// Both protocol eras are served from one factory: on 2026-07-28 the tools return
// `inputRequired(...)` (multi round-trip requests) and read `ctx.mcpReq.inputResponses`
// on the retry; in a 2025-11-25 session (opened with `initialize`) they send
// `elicitation/create` / `sampling/createMessage` to the client during the call. Over
// HTTP the 2025-11-25 traffic goes to sessionful Streamable HTTP transports (routed with
// the SDK's `isLegacyRequest`), since the SDK's default stateless legacy fallback builds a
// fresh server per request, which never saw `initialize` and so cannot ask the client.

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';

import {
    McpServer,
    acceptedContent,
    WebStandardStreamableHTTPServerTransport,
    createMcpHandler,
    fromJsonSchema,
    inputRequired,
    inputResponse,
    isLegacyRequest
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const PIZZA_FORM = {
    type: 'object',
    properties: {
        name: { type: 'string', title: 'Name', description: 'Who the order is for' },
        size: { type: 'string', title: 'Size', enum: ['small', 'medium', 'large'] },
        slices: { type: 'number', title: 'Slices', minimum: 1, maximum: 12, description: 'How many slices' }
    },
    required: ['name', 'size', 'slices']
};

const text = (t, isError = false) => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError: true } : {}) });

function pizzaText(topping, answer) {
    if (!answer || answer.action !== 'accept' || !answer.content) {
        return text(`order_pizza: the form was ${answer?.action ?? 'not answered'}, no order`, true);
    }
    const { name, size, slices } = answer.content;
    if (typeof name !== 'string' || !['small', 'medium', 'large'].includes(size)) {
        return text(`order_pizza: bad answers ${JSON.stringify(answer.content)}`, true);
    }
    const n = Number(slices);
    if (!Number.isFinite(n) || n < 1 || n > 12) {
        return text(`order_pizza: slices out of range: ${JSON.stringify(slices)}`, true);
    }
    return text(`Order for ${name}: a ${size} ${topping} pizza cut in ${n} slices`);
}

function samplingText(result) {
    const content = Array.isArray(result?.content) ? result.content[0] : result?.content;
    if (!content || content.type !== 'text') {
        return text(`summarize: no text from the model: ${JSON.stringify(result)}`, true);
    }
    return text(`The model says: ${content.text}`);
}

function samplingParams(topic) {
    return {
        messages: [{ role: 'user', content: { type: 'text', text: `Summarize ${topic} in one sentence.` } }],
        systemPrompt: 'You are terse.',
        maxTokens: 60
    };
}

function build({ era }) {
    const server = new McpServer({ name: 'saga-ts-sdk-test-server', version: '0.0.0' });

    server.registerTool(
        'echo',
        {
            description: 'Returns its text.',
            inputSchema: fromJsonSchema({
                type: 'object',
                properties: { text: { type: 'string', description: 'What to echo' } },
                required: ['text']
            })
        },
        async ({ text: said }) => text(`echo: ${said}`)
    );

    server.registerTool(
        'order_pizza',
        {
            description: 'Asks who the pizza is for, its size and slices (a form), then orders it.',
            inputSchema: fromJsonSchema({
                type: 'object',
                properties: { topping: { type: 'string', description: 'The topping' } },
                required: ['topping']
            })
        },
        async ({ topping }, ctx) => {
            const message = `Pizza with ${topping}: who is it for, what size, how many slices?`;
            if (era === 'legacy') {
                const answer = await ctx.mcpReq.elicitInput({ mode: 'form', message, requestedSchema: PIZZA_FORM });
                return pizzaText(topping, answer);
            }
            const view = inputResponse(ctx.mcpReq.inputResponses, 'pizza_form');
            if (view.kind === 'missing') {
                return inputRequired({
                    inputRequests: { pizza_form: inputRequired.elicit({ message, requestedSchema: PIZZA_FORM }) }
                });
            }
            if (view.kind !== 'elicit') {
                return text(`order_pizza: pizza_form answered with a ${view.kind}`, true);
            }
            return pizzaText(topping, {
                action: view.action,
                content: acceptedContent(ctx.mcpReq.inputResponses, 'pizza_form')
            });
        }
    );

    server.registerTool(
        'summarize',
        {
            description: 'Asks the client model (sampling) to summarize a topic.',
            inputSchema: fromJsonSchema({
                type: 'object',
                properties: { topic: { type: 'string', description: 'What to summarize' } },
                required: ['topic']
            })
        },
        async ({ topic }, ctx) => {
            if (era === 'legacy') {
                return samplingText(await ctx.mcpReq.requestSampling(samplingParams(topic)));
            }
            const view = inputResponse(ctx.mcpReq.inputResponses, 'summary');
            if (view.kind === 'missing') {
                return inputRequired({
                    inputRequests: { summary: inputRequired.createMessage(samplingParams(topic)) }
                });
            }
            if (view.kind !== 'sampling') {
                return text(`summarize: summary answered with a ${view.kind}`, true);
            }
            return samplingText(view.result);
        }
    );

    return server;
}

const onerror = error => console.error(`server error: ${error?.stack ?? error}`);

if (process.argv[2] === '--stdio') {
    serveStdio(build, { onerror });
} else {
    const port = Number(process.argv[2] ?? 0);
    const modern = createMcpHandler(build, { legacy: 'reject', onerror });
    const sessions = new Map();
    const legacy = async request => {
        const id = request.headers.get('mcp-session-id');
        if (id) {
            const transport = sessions.get(id);
            return transport
                ? transport.handleRequest(request)
                : Response.json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }, { status: 404 });
        }
        const transport = new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: sessionId => void sessions.set(sessionId, transport),
            onsessionclosed: sessionId => void sessions.delete(sessionId)
        });
        await build({ era: 'legacy' }).connect(transport);
        return transport.handleRequest(request);
    };
    const handler = {
        fetch: async request => ((await isLegacyRequest(request)) ? legacy(request) : modern.fetch(request))
    };

    // node:http in front of the web-standard handler (what @modelcontextprotocol/node's
    // toNodeHandler does, kept here so the test needs only the server package).
    const httpServer = http.createServer(async (req, res) => {
        try {
            const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
            if (url.pathname !== '/mcp') {
                res.writeHead(404).end('not found');
                return;
            }
            const abort = new AbortController();
            res.on('close', () => abort.abort());
            const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
            const request = new Request(url, {
                method: req.method,
                headers: Object.entries(req.headers).flatMap(([k, v]) =>
                    v === undefined ? [] : Array.isArray(v) ? v.map(x => [k, x]) : [[k, v]]
                ),
                body: hasBody ? Readable.toWeb(req) : undefined,
                duplex: hasBody ? 'half' : undefined,
                signal: abort.signal
            });
            const response = await handler.fetch(request);
            res.writeHead(response.status, Object.fromEntries(response.headers));
            if (response.body) {
                for await (const chunk of response.body) {
                    res.write(chunk);
                }
            }
            res.end();
        } catch (error) {
            onerror(error);
            if (!res.headersSent) res.writeHead(500);
            res.end();
        }
    });
    httpServer.listen(port, '127.0.0.1', () => {
        const { port: bound } = httpServer.address();
        console.log(`listening on http://127.0.0.1:${bound}/mcp`);
    });
}
