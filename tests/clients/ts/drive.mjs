// Drives a saga example (deploy, weather or research) to completion with the official MCP
// TypeScript client, @modelcontextprotocol/client 2.4, pinned to a protocol version, with
// scripted elicitation and sampling handlers: at 2026-07-28 the client fulfils
// input_required rounds itself; at 2025-11-25 it opens a session with `initialize` and the
// server sends it the same requests during the call.
//
//   node drive.mjs --http http://127.0.0.1:PORT/mcp --tool deploy|weather|research [--era 2026-07-28|2025-11-25]
//   node drive.mjs --stdio /path/to/binary --tool deploy|weather [--era …]
//   … --no-sampling: declare no sampling (a server with a model of its own answers it)
//   … --traceparent TRACEPARENT: send this W3C trace context in every request's `_meta`
//     (SEP-414), as a client instrumented with OpenTelemetry propagates its span
//   … --oauth CLIENT:SECRET@ISSUER: get a token as that OAuth client (client credentials)
//     when the server answers 401, through the SDK's own discovery (the server's protected
//     resource metadata, then the issuer's metadata) and retry with it
//
// Exits 0 when the final text is exactly the expected one, non-zero otherwise.

import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';

const SCENARIOS = {
    deploy: {
        tool: 'complex_tool',
        args: { initial_arg: 'value' },
        // One input request per round: first the form, then the LLM check.
        rounds: [['elicitation/create'], ['sampling/createMessage']],
        keys: null, // keys are the server's choice
        expected: 'Deployment to production initiated successfully based on confirmation.',
    },
    weather: {
        tool: 'get_weather',
        args: { location: 'New York' },
        // One round with both requests at once, under the keys the tool chose.
        rounds: [['elicitation/create', 'sampling/createMessage']],
        keys: [['github_login', 'capital_of_france']],
        expected: 'Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy',
    },
    research: {
        tool: 'research',
        args: { question: 'What is MRTR?' },
        // An agent loop, the client's LLM offered tools (sampling.tools): two searches at
        // once, then a question for the person, then the answer.
        rounds: [['sampling/createMessage'], ['sampling/createMessage'], ['elicitation/create'], ['sampling/createMessage']],
        keys: null,
        expected:
            'Answer: mrtr: MCP 2026-07-28 answers input_required with the requests and an opaque requestState.' +
            " | saga: saga compiles one async function into a state machine sealed into the client's token." +
            ' | durability',
    },
};

// Scripted answers, chosen by what is asked.
const ELICIT_ANSWERS = { target: 'production', name: 'octocat', answer: 'durability' };

// The client's LLM as a small agent when the request offers tools: two searches at once
// (parallel tool uses), then `ask_user`, then an answer made of every tool result's text.
// ANCHOR: agent_turn
function agentTurn(params) {
    const names = params.tools.map(tool => tool.name);
    if (!names.includes('search') || !names.includes('ask_user')) throw new Error(`unexpected tools ${JSON.stringify(names)}`);
    const blocks = params.messages.flatMap(m => (Array.isArray(m.content) ? m.content : [m.content]));
    const results = blocks.filter(b => b.type === 'tool_result');
    const use = (id, name, input) => ({ type: 'tool_use', id, name, input });
    let content;
    if (results.length === 0) {
        const question = textOf([params.messages[0].content].flat());
        content = [use('ts-1', 'search', { query: question }), use('ts-2', 'search', { query: 'saga' })];
    } else if (results.length === 2) {
        content = [use('ts-3', 'ask_user', { question: 'Which part matters most to you?' })];
    } else {
        const text = 'Answer: ' + results.map(r => textOf(r.content)).join(' | ');
        return { model: 'scripted-agent', role: 'assistant', content: { type: 'text', text }, stopReason: 'endTurn' };
    }
    return { model: 'scripted-agent', role: 'assistant', content, stopReason: 'toolUse' };
}
// ANCHOR_END: agent_turn
const SAMPLE_ANSWERS = {
    "Is deploying to 'production' safe right now?": 'Yes, all systems are green.',
    'What is the capital of France?': 'The capital of France is Paris.',
};

function parseArgs(argv) {
    const out = {};
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === '--no-sampling') {
            out.noSampling = true;
        } else if (a === '--http' || a === '--stdio' || a === '--tool' || a === '--era' || a === '--oauth' || a === '--traceparent') {
            if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
            out[a.slice(2)] = argv[++i];
        } else {
            throw new Error(`unknown argument ${JSON.stringify(a)}`);
        }
    }
    if (!!out.http === !!out.stdio) throw new Error('give exactly one of --http URL or --stdio BINARY');
    if (!SCENARIOS[out.tool]) throw new Error('--tool must be deploy, weather or research');
    out.era ??= '2026-07-28';
    if (!['2026-07-28', '2025-11-25'].includes(out.era)) throw new Error('--era must be 2026-07-28 or 2025-11-25');
    return out;
}

// Watches the JSON-RPC traffic of the transport (both directions) without changing it, to
// check the rounds: how many `tools/call` legs, what each `input_required` asked for, and
// that each retry echoes `requestState` and answers exactly the keys asked.
function tap(transport, wire, traceparent) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
        if (traceparent && typeof message?.method === 'string' && 'id' in message) {
            message = { ...message, params: { ...message.params, _meta: { ...message.params?._meta, traceparent } } };
        }
        if (message?.method === 'tools/call') wire.calls.push(message.params);
        return send(message, options);
    };
    let handler;
    Object.defineProperty(transport, 'onmessage', {
        configurable: true,
        enumerable: true,
        get: () => handler,
        set: fn => {
            handler =
                typeof fn === 'function'
                    ? (message, extra) => {
                          const r = message?.result;
                          if (r && r.resultType === 'input_required') wire.inputRequired.push(r);
                          else if (r && Array.isArray(r.content)) wire.results.push(r);
                          return fn(message, extra);
                      }
                    : fn;
        },
    });
}

function sameSet(a, b) {
    return a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);
}

function checkRounds(scenario, wire, seen) {
    const problems = [];
    const n = scenario.rounds.length;
    if (wire.inputRequired.length !== n) {
        problems.push(`got ${wire.inputRequired.length} input_required results, expected ${n}`);
    }
    if (wire.calls.length !== n + 1) problems.push(`sent ${wire.calls.length} tools/call legs, expected ${n + 1}`);
    for (let i = 0; i < Math.min(n, wire.inputRequired.length); i++) {
        const ir = wire.inputRequired[i];
        const keys = Object.keys(ir.inputRequests ?? {});
        const methods = keys.map(k => ir.inputRequests[k].method);
        if (!sameSet(methods, scenario.rounds[i])) {
            problems.push(`round ${i + 1} asked ${JSON.stringify(methods)}, expected ${JSON.stringify(scenario.rounds[i])}`);
        }
        if (scenario.keys && !sameSet(keys, scenario.keys[i])) {
            problems.push(`round ${i + 1} keys ${JSON.stringify(keys)}, expected ${JSON.stringify(scenario.keys[i])}`);
        }
        if (typeof ir.requestState !== 'string' || ir.requestState === '') {
            problems.push(`round ${i + 1} has no requestState`);
        }
        const retry = wire.calls[i + 1];
        if (retry) {
            if (retry.requestState !== ir.requestState) problems.push(`retry ${i + 1} did not echo requestState`);
            if (!sameSet(Object.keys(retry.inputResponses ?? {}), keys)) {
                problems.push(`retry ${i + 1} answered ${JSON.stringify(Object.keys(retry.inputResponses ?? {}))}, asked ${JSON.stringify(keys)}`);
            }
            console.error(`[ts] leg ${i + 2}: inputResponses ${JSON.stringify(retry.inputResponses)}`);
        }
    }
    const handled = [...seen.elicitations, ...seen.samplings].map(x => String(x.key));
    const asked = wire.inputRequired.flatMap(ir => Object.keys(ir.inputRequests ?? {}));
    if (!sameSet(handled, asked)) problems.push(`handlers saw keys ${JSON.stringify(handled)}, server asked ${JSON.stringify(asked)}`);
    if (wire.results.length !== 1) problems.push(`got ${wire.results.length} complete results, expected 1`);
    return problems;
}

// In a session the server asks during the one call: every request of every round reaches
// a handler, and no input_required result is ever seen.
function checkSession(scenario, wire, seen) {
    const problems = [];
    if (wire.inputRequired.length !== 0) problems.push(`got ${wire.inputRequired.length} input_required results in a session`);
    if (wire.calls.length !== 1) problems.push(`sent ${wire.calls.length} tools/call requests, expected 1`);
    const expected = scenario.rounds.flat();
    const handled = [
        ...seen.elicitations.map(() => 'elicitation/create'),
        ...seen.samplings.map(() => 'sampling/createMessage'),
    ];
    if (!sameSet(handled, expected)) problems.push(`handlers saw ${JSON.stringify(handled)}, expected ${JSON.stringify(expected)}`);
    if (wire.results.length !== 1) problems.push(`got ${wire.results.length} complete results, expected 1`);
    return problems;
}

function textOf(content) {
    if (!Array.isArray(content)) return undefined;
    return content.filter(c => c && c.type === 'text').map(c => c.text).join('');
}

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    let scenario = SCENARIOS[opts.tool];
    if (opts.noSampling) {
        // The server's model answers every sample: the client is asked only the rest.
        scenario = {
            ...scenario,
            rounds: scenario.rounds
                .map(round => round.filter(method => method !== 'sampling/createMessage'))
                .filter(round => round.length > 0),
            keys: null,
        };
    }
    const seen = { elicitations: [], samplings: [] };
    const wire = { calls: [], inputRequired: [], results: [] };

    // ANCHOR: client
    const client = new Client(
        { name: 'saga-ts-driver', version: '0.0.0' },
        {
            capabilities: opts.noSampling
                ? { elicitation: { form: {} } }
                : { elicitation: { form: {} }, sampling: { tools: {} } },
            versionNegotiation: { mode: opts.era === '2025-11-25' ? 'legacy' : { pin: opts.era } },
            // The SDK gives up after 10 rounds by default: an agent loop of more turns
            // (each turn is a round) needs more.
            inputRequired: { autoFulfill: true, maxRounds: 50 },
        },
    );
    // ANCHOR_END: client

    // ANCHOR: handlers
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
        const params = request.params;
        seen.elicitations.push({ key: ctx.mcpReq.id, params });
        console.error(`[ts] elicitation ${ctx.mcpReq.id}: ${JSON.stringify(params)}`);
        const props = Object.keys(params.requestedSchema?.properties ?? {});
        const content = {};
        for (const p of props) {
            if (!(p in ELICIT_ANSWERS)) throw new Error(`unexpected elicitation field ${p}`);
            content[p] = ELICIT_ANSWERS[p];
        }
        if (props.length === 0) throw new Error('elicitation without fields');
        return { action: 'accept', content };
    });

    // The SDK refuses a handler for a capability the client does not declare.
    if (!opts.noSampling) {
        client.setRequestHandler('sampling/createMessage', async (request, ctx) => {
            const params = request.params;
            seen.samplings.push({ key: ctx.mcpReq.id, params });
            console.error(`[ts] sampling ${ctx.mcpReq.id}: ${JSON.stringify(params)}`);
            if (params.tools) return agentTurn(params);
            const last = params.messages.at(-1);
            const contents = Array.isArray(last.content) ? last.content : [last.content];
            const prompt = textOf(contents);
            const answer = SAMPLE_ANSWERS[prompt];
            if (answer === undefined) throw new Error(`unexpected sampling prompt ${JSON.stringify(prompt)}`);
            return {
                model: 'scripted-model',
                role: 'assistant',
                content: { type: 'text', text: answer },
                stopReason: 'endTurn',
            };
        });
    }
    // ANCHOR_END: handlers

    let transport;
    if (opts.http) {
        let authProvider;
        if (opts.oauth) {
            const match = /^([^:]+):([^@]+)@(.+)$/.exec(opts.oauth);
            if (!match) throw new Error('--oauth is CLIENT:SECRET@ISSUER');
            authProvider = new ClientCredentialsProvider({
                clientId: match[1],
                clientSecret: match[2],
                expectedIssuer: match[3],
            });
        }
        transport = new StreamableHTTPClientTransport(new URL(opts.http), { authProvider });
    } else {
        const env = { ...getDefaultEnvironment() };
        for (const k of ['SAGA_KEYS', 'RUST_LOG']) if (process.env[k]) env[k] = process.env[k];
        // A server that exports its spans (tests/otel) is told where, as any OTLP exporter is.
        for (const [k, v] of Object.entries(process.env)) if (k.startsWith('OTEL_')) env[k] = v;
        transport = new StdioClientTransport({ command: opts.stdio, args: ['--stdio'], env, stderr: 'inherit' });
    }

    tap(transport, wire, opts.traceparent);
    // ANCHOR: call
    await client.connect(transport);
    console.error(`[ts] connected: era=${client.getProtocolEra()} version=${client.getNegotiatedProtocolVersion()}`);
    if (client.getNegotiatedProtocolVersion() !== opts.era) {
        throw new Error(`negotiated ${client.getNegotiatedProtocolVersion()}, wanted ${opts.era}`);
    }

    const result = await client.callTool({ name: scenario.tool, arguments: scenario.args });
    // ANCHOR_END: call
    console.error(`[ts] result: ${JSON.stringify(result)}`);
    await client.close();

    const text = textOf(result.content);
    const problems = [];
    if (result.isError) problems.push('result.isError is true');
    if (text !== scenario.expected) {
        problems.push(`final text ${JSON.stringify(text)} != expected ${JSON.stringify(scenario.expected)}`);
    }
    problems.push(...(opts.era === '2025-11-25' ? checkSession(scenario, wire, seen) : checkRounds(scenario, wire, seen)));
    if (problems.length) {
        for (const p of problems) console.error(`[ts] FAIL: ${p}`);
        process.exit(1);
    }
    console.log(JSON.stringify(text));
    process.exit(0);
}

main().catch(err => {
    console.error(`[ts] error: ${err?.stack ?? err}`);
    if (err?.data !== undefined) console.error(`[ts] error data: ${JSON.stringify(err.data)}`);
    process.exit(2);
});
