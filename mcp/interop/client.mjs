// Drives `folio mcp` with the reference TypeScript MCP client: lists the
// tools, reads a document, proposes an operation, reads a resource, and
// prints one JSON line with what it saw. Usage:
//   node client.mjs DOC COMMAND [ARG...]
// The Go test TestMCPInterop (cmd/folio) runs it and checks the line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [doc, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "ts-interop", version: "1.32.2" });
await client.connect(transport);

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
const read = await client.callTool({ name: "read_document", arguments: { doc } });
const proposed = await client.callTool({
  name: "propose_operations",
  arguments: {
    doc, base: read.structuredContent.version, scope: { kind: "block", block: "p2" }, summary: "from TypeScript",
    ops: [{ op: "replace_block", blockId: "p2", block: { id: "p2", type: "paragraph", richText: [{ text: "Cut the filler." }] } }],
  },
});
const refused = await client.callTool({ name: "read_document", arguments: { doc, unknown: 1 } }).then(
  (r) => (r.isError ? text(r) : "accepted"), (e) => String(e));
const resource = await client.readResource({ uri: `folio://doc/${doc}` });
console.log(JSON.stringify({
  server: client.getServerVersion(),
  tools,
  version: read.structuredContent.version,
  readText: text(read).slice(0, 200),
  suggestion: proposed.structuredContent?.suggestion ?? null,
  proposeError: proposed.isError ? text(proposed) : null,
  refused,
  resource: resource.contents[0].text.slice(0, 4000),
}));
await client.close();
