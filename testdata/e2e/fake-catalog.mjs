#!/usr/bin/env node
// An MCP server over stdio with a large catalog of fake tools, for the Tool Search end-to-end
// regression: fake_plugin_tool_01 … fake_plugin_tool_NN, each with a verbose description and a
// strict {marker: string} schema, answering FAKE_PLUGIN_OK.
//
//   node fake-catalog.mjs [COUNT]   (default 36)
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const count = Number(process.argv[2] ?? 36);
const topics = ["invoices", "shipments", "tickets", "forecasts", "contracts", "payroll", "inventory", "audits", "leads"];
const tools = [];
for (let i = 1; i <= count; i++) {
  const n = String(i).padStart(2, "0");
  const topic = topics[i % topics.length];
  tools.push({
    name: `fake_plugin_tool_${n}`,
    description:
      `Fake plugin tool number ${n} for the Tool Search regression. It pretends to reconcile ${topic} ` +
      `for an imaginary back office, with a long description like real plugin tools have, so that direct ` +
      `exposure pays for every schema and description up front. Pass the marker string you were given.`,
    inputSchema: {
      type: "object",
      properties: { marker: { type: "string", description: "The marker string to echo back." } },
      required: ["marker"],
      additionalProperties: false,
    },
  });
}

const server = new Server({ name: "fake-catalog", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const tool = tools.find((t) => t.name === req.params.name);
  if (!tool) {
    return { content: [{ type: "text", text: `unknown tool ${req.params.name}` }], isError: true };
  }
  const marker = req.params.arguments?.marker ?? "";
  return { content: [{ type: "text", text: `FAKE_PLUGIN_OK ${tool.name} ${marker}` }] };
});
await server.connect(new StdioServerTransport());
