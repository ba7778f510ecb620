// The official MCP TypeScript SDK serving the benchmark tools (a peer, like peer_sdk_server.py).
//
// `--major 2`: @modelcontextprotocol/server + @modelcontextprotocol/node (2.x, the
// 2026-07-28 line); `--major 1`: @modelcontextprotocol/sdk (1.x). Both run in their
// fastest documented configuration: stateless (a server and a transport per request,
// as the READMEs show) with JSON responses. The tools validate as strictly as the
// Python SDK peer's pydantic models. Run by the pinned Node 22 from .cache/node.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

// The locked packages live in .cache/node/node_modules (scripts/node_tools.py), not
// beside this file: resolve them from there.
const modules = process.env.WYMCP_NODE_MODULES;
if (!modules) {
    throw new Error('WYMCP_NODE_MODULES must name .cache/node/node_modules');
}
const require = createRequire(join(modules, 'peer.js'));
const z = require('zod');

const { values } = parseArgs({
    options: {
        major: { type: 'string', default: '2' },
        port: { type: 'string' },
        json: { type: 'boolean', default: false }, // always JSON; accepted like the Python peers
    },
});
if (values.port === undefined) {
    throw new Error('--port is required');
}

const Item = z.object({
    sku: z.string().min(1).max(32),
    qty: z.number().int().min(1).max(1000),
    price: z.number().min(0),
});
const Order = z.object({
    customer: z.string().min(1).max(64),
    items: z.array(Item).max(100),
});
const shapes = {
    calc: { a: z.number(), b: z.number() },
    calcOut: { result: z.number() },
    order: { order: Order },
    orderOut: { count: z.number().int(), total: z.number() },
    total: { values: z.array(z.number()) },
    totalOut: { result: z.number() },
};

function structured(value) {
    return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

function addTools(server, wrap) {
    server.registerTool(
        'calc',
        { description: 'Add two numbers.', inputSchema: wrap(shapes.calc), outputSchema: wrap(shapes.calcOut) },
        async ({ a, b }) => structured({ result: a + b }),
    );
    server.registerTool(
        'order_total',
        { description: 'Total an order.', inputSchema: wrap(shapes.order), outputSchema: wrap(shapes.orderOut) },
        async ({ order }) => {
            let total = 0;
            for (const item of order.items) total += item.qty * item.price;
            return structured({ count: order.items.length, total });
        },
    );
    server.registerTool(
        'total',
        { description: 'Sum a list of numbers.', inputSchema: wrap(shapes.total), outputSchema: wrap(shapes.totalOut) },
        async ({ values: numbers }) => structured({ result: numbers.reduce((s, v) => s + v, 0) }),
    );
}

async function handlerFor(major) {
    if (major === '2') {
        // 2.x's documented entry for 2026-07-28: createMcpHandler with a server factory,
        // never streaming (responseMode 'json'); 2025 traffic takes its stateless fallback.
        const { McpServer, createMcpHandler } = require('@modelcontextprotocol/server');
        const { toNodeHandler } = require('@modelcontextprotocol/node');
        const factory = () => {
            const server = new McpServer({ name: 'bench-ts-sdk-2', version: '0' });
            addTools(server, (shape) => z.object(shape));
            return server;
        };
        const handler = toNodeHandler(createMcpHandler(factory, { responseMode: 'json' }));
        return async (req, res) => handler(req, res);
    }
    if (major === '1') {
        const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
        const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
        return async (req, res) => {
            const server = new McpServer({ name: 'bench-ts-sdk-1', version: '0' });
            addTools(server, (shape) => shape);
            const transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: undefined,
                enableJsonResponse: true,
            });
            res.on('close', () => {
                transport.close();
                server.close();
            });
            await server.connect(transport);
            await transport.handleRequest(req, res);
        };
    }
    throw new Error(`--major must be 1 or 2, not ${major}`);
}

const handle = await handlerFor(values.major);
createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/mcp') {
        res.writeHead(405).end();
        return;
    }
    handle(req, res).catch((error) => {
        console.error(error);
        if (!res.headersSent) res.writeHead(500).end();
    });
}).listen(Number(values.port), '127.0.0.1');
