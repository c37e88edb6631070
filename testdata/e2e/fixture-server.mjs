#!/usr/bin/env node
// An MCP server over stdio whose behaviour tests steer through its tools: tools that change the
// tool list, block until cancelled, report the process id, crash, or write garbage to stdout.
//
//   node fixture-server.mjs [--garbage]   (--garbage: write a non-JSON line to stdout at start)
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
if (argv.includes("--garbage")) {
  process.stdout.write("this is not JSON-RPC\n");
}

const server = new Server(
  { name: "nodmix-fixture", version: "1.0.0" },
  { capabilities: { tools: { listChanged: true } } },
);

const text = (t) => ({ content: [{ type: "text", text: t }] });
const tools = new Map();
let cancelled = 0;
let inflight = 0;

function define(name, description, properties, handler) {
  tools.set(name, { description, inputSchema: { type: "object", properties }, handler });
}

define("echo", "Echoes the message back.", { message: { type: "string" } }, (a) => text(`echo: ${a.message ?? ""}`));
define("pid", "Returns the process id of this server.", {}, () => text(String(process.pid)));
define("add_tool", "Adds a tool with the given name and announces the change.", { name: { type: "string" } }, async (a) => {
  define(a.name, "A tool added at run time.", {}, () => text(`I am ${a.name}`));
  await server.sendToolListChanged();
  return text(`added ${a.name}`);
});
define("remove_tool", "Removes a tool and announces the change.", { name: { type: "string" } }, async (a) => {
  tools.delete(a.name);
  await server.sendToolListChanged();
  return text(`removed ${a.name}`);
});
define("sleep", "Waits ms milliseconds, or until the call is cancelled.", { ms: { type: "number" } }, (a, extra) =>
  new Promise((resolve, reject) => {
    inflight++;
    const timer = setTimeout(() => {
      inflight--;
      resolve(text("slept"));
    }, a.ms ?? 1000);
    extra.signal.addEventListener("abort", () => {
      clearTimeout(timer);
      inflight--;
      cancelled++;
      reject(new Error("cancelled"));
    });
  }),
);
define("inflight", "How many sleep calls are running now.", {}, () => text(String(inflight)));
define("cancelled_count", "How many calls were cancelled by the client so far.", {}, () => text(String(cancelled)));
define("fail", "Always fails with a tool error.", {}, () => ({ content: [{ type: "text", text: "it failed" }], isError: true }));
define("crash", "Exits the process at once.", {}, () => process.exit(3));
define("garbage", "Writes a non-JSON line to stdout.", {}, () => {
  process.stdout.write("garbage!\n");
  return text("wrote garbage");
});

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [...tools].map(([name, t]) => ({ name, description: t.description, inputSchema: t.inputSchema })),
}));

server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const t = tools.get(req.params.name);
  if (!t) {
    throw new Error(`unknown tool ${req.params.name}`);
  }
  return t.handler(req.params.arguments ?? {}, extra);
});

process.stdin.on("end", () => process.exit(0));
await server.connect(new StdioServerTransport());
console.error(`fixture server ready, pid ${process.pid}`);
if (process.env.FIXTURE_SECRET) {
  // A server that prints its credentials: nodmix must mask them in its log.
  console.error(`my secret is ${process.env.FIXTURE_SECRET}`);
}
