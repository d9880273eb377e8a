// The TypeScript MCP SDK's client through mcp-router: it finds a routed
// tool (request_more_tools), describes it (describe_tools), calls it
// (call_tool) and lists its belt, then prints what it saw as one line of
// JSON on stdout.
//
//   node tsclient.mjs stdio BINARY CONFIG   serve over stdio: BINARY serve --config CONFIG
//   node tsclient.mjs http URL              a gateway serving streamable HTTP at URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, config] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: target, args: ["serve", "--config", config], env: process.env, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(target));

// The SDK keeps the negotiated version to itself; it hands it to the
// transport, where it is read here.
let version = "";
const set = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => { version = v; set?.(v); };

const client = new Client({ name: "ts-eras", version: "1" });
await client.connect(transport);
const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
// Over stdio the gateway answers before its upstream has connected.
for (let i = 0; ; i++) {
  const d = await client.callTool({ name: "describe_tools", arguments: { tools: ["calculator_add"] } });
  if (!d.isError) break;
  if (i === 200) throw new Error("calculator_add never joined the catalog");
  await new Promise((r) => setTimeout(r, 50));
}
const found = await client.callTool({ name: "request_more_tools", arguments: { query: "add two numbers" } });
const described = await client.callTool({ name: "describe_tools", arguments: { tools: ["calculator_add"] } });
const called = await client.callTool({ name: "call_tool", arguments: { name: "calculator_add", arguments: { a: 2, b: 3 } } });
const belt = (await client.listTools()).tools.map((t) => t.name);
process.stdout.write(JSON.stringify({ version, found: text(found), described: text(described), called: text(called), belt }) + "\n");
await client.close();
