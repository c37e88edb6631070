#!/usr/bin/env node
// Drives nodmix's OpenAI-compatible API with the official openai npm client and prints what it
// got as JSON: a plain completion, a streamed one, a Responses call (plain and streamed), and a
// client tool round trip in one session.
//
//   node openai-client.mjs BASE_URL MODEL
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const session = "npm-" + Date.now();
const client = new OpenAI({ baseURL, apiKey: process.env.NODMIX_TOKEN || "unused", maxRetries: 0 });
const out = {};

const plain = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hello from npm" }] });
out.plain = { content: plain.choices[0].message.content, finish: plain.choices[0].finish_reason, usage: plain.usage };

const stream = await client.chat.completions.create({
  model, stream: true, stream_options: { include_usage: true },
  messages: [{ role: "user", content: "streamed hello" }],
});
let text = "", chunks = 0, usage = null;
for await (const chunk of stream) {
  chunks++;
  text += chunk.choices[0]?.delta?.content ?? "";
  if (chunk.usage) usage = chunk.usage;
}
out.stream = { text, chunks, usage };

const resp = await client.responses.create({ model, input: "responses hello" });
out.responses = { text: resp.output_text, status: resp.status };

const rstream = await client.responses.create({ model, input: "responses stream", stream: true });
let rtext = "", types = [];
for await (const ev of rstream) {
  types.push(ev.type);
  if (ev.type === "response.output_text.delta") rtext += ev.delta;
}
out.responsesStream = { text: rtext, first: types[0], last: types[types.length - 1] };

const tools = [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
const headers = { "x-nodmix-session": session };
const first = await client.chat.completions.create(
  { model, tools, messages: [{ role: "user", content: 'use get_weather {"city":"Oslo"}' }] }, { headers });
const call = first.choices[0].message.tool_calls?.[0];
out.toolCall = { finish: first.choices[0].finish_reason, name: call?.function.name, args: call?.function.arguments };
const second = await client.chat.completions.create({
  model, tools, messages: [
    { role: "user", content: 'use get_weather {"city":"Oslo"}' },
    first.choices[0].message,
    { role: "tool", tool_call_id: call.id, content: "sunny, 21 C" },
  ],
}, { headers });
out.toolResult = { content: second.choices[0].message.content };
out.session = session;

try {
  await client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] });
} catch (e) {
  out.error = { status: e.status, code: e.code, type: e.type };
}
console.log(JSON.stringify(out));
