#!/usr/bin/env node
// A real MCP client (the official TypeScript SDK) that runs a list of steps against a server and
// prints what happened as JSON, for end-to-end tests of nodmix as an MCP server.
//
//   node client.mjs [--header "Name: value"]... --url <url>   < steps.json
//   node client.mjs --stdio <command> [args...]                 < steps.json
//
// A stdio server inherits the client's whole environment. Over HTTP the client ends its session
// (DELETE) when the steps are done.
//
// stdin holds a JSON array of steps; stdout gets one JSON object:
//   {"protocolVersion", "serverInfo", "capabilities", "results": [{"op", "ok", ...}, ...]}
// A failed step does not stop the run (its result has ok:false and an error); the exit code is 0
// when the client connected and ran every step, 1 when it could not connect, 2 on usage errors.
//
// Steps:
//   {"op":"tools"}                                   -> tools: [{name,title,description,inputSchema}]
//   {"op":"call","name":N,"arguments":{...},"timeoutMs":T} -> result: CallToolResult
//   {"op":"waitToolsChanged","timeoutMs":T}          -> count: tools/list_changed received so far
//   {"op":"prompts"} | {"op":"getPrompt","name":N,"arguments":{...}}
//   {"op":"resources"} | {"op":"templates"} | {"op":"read","uri":U}
//   {"op":"request","method":M,"params":{...}}       -> result: raw result (any method)
//   {"op":"ping"} | {"op":"sleep","ms":T}
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResultSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

function usage(msg) {
  process.stderr.write(`client.mjs: ${msg}\nusage: node client.mjs [--header "K: V"]... (--url URL | --stdio CMD [ARGS...]) < steps.json\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { headers: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--url") {
      opts.url = argv[++i];
    } else if (a === "--header") {
      const h = argv[++i] ?? "";
      const at = h.indexOf(":");
      if (at <= 0) usage(`bad --header ${JSON.stringify(h)}`);
      opts.headers[h.slice(0, at).trim()] = h.slice(at + 1).trim();
    } else if (a === "--stdio") {
      opts.command = argv[i + 1];
      opts.args = argv.slice(i + 2);
      break;
    } else {
      usage(`unknown argument ${JSON.stringify(a)}`);
    }
  }
  if (!opts.url === !opts.command) usage("give exactly one of --url or --stdio");
  return opts;
}

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (!text) return [];
  const steps = JSON.parse(text);
  if (!Array.isArray(steps)) usage("stdin must hold a JSON array of steps");
  return steps;
}

const opts = parseArgs(process.argv.slice(2));
const steps = await readStdin();

let toolsChanged = 0;
const changeWaiters = [];
const client = new Client({ name: "nodmix-e2e-client", version: "1.0.0" }, { capabilities: {} });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  toolsChanged++;
  for (const w of changeWaiters.splice(0)) w();
});

const transport = opts.url
  ? new StreamableHTTPClientTransport(new URL(opts.url), { requestInit: { headers: opts.headers } })
  : // The whole environment, not the SDK's default safe subset: the server under test is ours.
    new StdioClientTransport({ command: opts.command, args: opts.args, env: { ...process.env }, stderr: "inherit" });

try {
  await client.connect(transport);
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String(err?.message ?? err) }) + "\n");
  process.exit(1);
}

function errorOf(err) {
  const e = { message: String(err?.message ?? err) };
  if (typeof err?.code === "number") e.code = err.code;
  return e;
}

async function listAll(method, key, fn) {
  const out = [];
  let cursor;
  for (let page = 0; page < 1000; page++) {
    const res = await fn(cursor ? { cursor } : undefined);
    out.push(...(res[key] ?? []));
    if (!res.nextCursor) return out;
    cursor = res.nextCursor;
  }
  throw new Error(`${method}: too many pages`);
}

function waitToolsChanged(seen, timeoutMs) {
  if (toolsChanged > seen) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no tools/list_changed within ${timeoutMs}ms`)), timeoutMs);
    changeWaiters.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

let seenChanges = 0;
async function run(step) {
  const timeout = step.timeoutMs ?? 30000;
  switch (step.op) {
    case "tools":
      return { tools: await listAll("tools/list", "tools", (p) => client.listTools(p)) };
    case "call":
      return { result: await client.callTool({ name: step.name, arguments: step.arguments }, undefined, { timeout }) };
    case "waitToolsChanged":
      await waitToolsChanged(seenChanges, timeout);
      seenChanges = toolsChanged;
      return { count: toolsChanged };
    case "prompts":
      return { prompts: await listAll("prompts/list", "prompts", (p) => client.listPrompts(p)) };
    case "getPrompt":
      return { result: await client.getPrompt({ name: step.name, arguments: step.arguments }) };
    case "resources":
      return { resources: await listAll("resources/list", "resources", (p) => client.listResources(p)) };
    case "templates":
      return { templates: await listAll("resources/templates/list", "resourceTemplates", (p) => client.listResourceTemplates(p)) };
    case "read":
      return { result: await client.readResource({ uri: step.uri }) };
    case "request":
      return { result: await client.request({ method: step.method, params: step.params }, ResultSchema, { timeout }) };
    case "ping":
      await client.ping();
      return {};
    case "sleep":
      await new Promise((r) => setTimeout(r, step.ms ?? 0));
      return {};
    default:
      throw new Error(`unknown op ${JSON.stringify(step.op)}`);
  }
}

const results = [];
for (const step of steps) {
  try {
    results.push({ op: step.op, ok: true, ...(await run(step)) });
  } catch (err) {
    results.push({ op: step.op, ok: false, error: errorOf(err) });
  }
}

const out = {
  protocolVersion: transport.protocolVersion,
  serverInfo: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  results,
};
process.stdout.write(JSON.stringify(out) + "\n");
// Over HTTP, end the session on the server (DELETE) rather than leaving it to time out.
if (opts.url) {
  await transport.terminateSession().catch(() => {});
}
await client.close();
process.exit(0);
