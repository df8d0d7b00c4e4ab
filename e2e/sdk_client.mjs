// The end-to-end scenario, driven through the official TypeScript SDK client.
//
//   node sdk_client.mjs <config.json> <server> <readonly-server> <article-url> <search-query>
//
// <config.json> uses the `mcpServers` shape of Claude Desktop / Claude Code: an entry with
// `command` is spawned over stdio, an entry with `url` is reached over streamable HTTP.
// The script does what an agent would: every id and offset it sends comes from the text of
// an earlier answer. It prints one JSON report on stdout; tests/e2e asserts on it.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [configPath, serverName, readonlyName, articleUrl, query] = process.argv.slice(2);
if (!query) {
  console.error("usage: node sdk_client.mjs <config.json> <server> <readonly-server> <article-url> <query>");
  process.exit(2);
}
const servers = JSON.parse(readFileSync(configPath, "utf8")).mcpServers;

function transportFor(name) {
  const entry = servers[name];
  if (!entry) throw new Error(`no server ${name} in ${configPath}`);
  if (entry.url) return { kind: "http", transport: new StreamableHTTPClientTransport(new URL(entry.url)) };
  return {
    kind: "stdio",
    transport: new StdioClientTransport({
      command: entry.command,
      args: entry.args ?? [],
      // As hosts do: a small safe environment plus the entry's own variables.
      env: { ...getDefaultEnvironment(), ...(entry.env ?? {}) },
      stderr: "inherit",
    }),
  };
}

async function connect(name) {
  const { kind, transport } = transportFor(name);
  const client = new Client({ name: "screvi-e2e-sdk-client", version: "1.0.0" });
  await client.connect(transport);
  return { client, kind };
}

function text(result) {
  return (result.content ?? [])
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  return { isError: result.isError === true, text: text(result) };
}

function mustMatch(pattern, source, what) {
  const match = pattern.exec(source);
  if (!match) throw new Error(`no ${what} in: ${source.slice(0, 500)}`);
  return match[1];
}

const report = { client: "@modelcontextprotocol/sdk" };
const { client, kind } = await connect(serverName);
report.transport = kind;
report.server = client.getServerVersion();
try {
  report.tools = (await client.listTools()).tools.map((tool) => tool.name);

  report.search = await call(client, "search_highlights", { query });
  report.highlight_id = mustMatch(/\bid ([0-9a-f-]{36})/, report.search.text, "highlight id");

  report.save = await call(client, "save_article", { url: articleUrl, wait: true, wait_seconds: 30 });
  report.article_id = mustMatch(/article ([0-9a-f-]{36})/, report.save.text, "article id");

  report.chunk1 = await call(client, "read_article", { article_id: report.article_id });
  const offset = Number(mustMatch(/offset=(\d+)/, report.chunk1.text, "next offset"));
  report.chunk2 = await call(client, "read_article", { article_id: report.article_id, offset });

  report.tag = await call(client, "add_highlight_tags", {
    highlight_id: report.highlight_id,
    tags: [`e2e-sdk-${kind}`],
  });

  const skill = await client.readResource({ uri: "screvi://skill.md" });
  report.skill = skill.contents.map(({ uri, mimeType, text: body }) => ({ uri, mimeType, text: body }));
} finally {
  await client.close();
}

const readonly = await connect(readonlyName);
try {
  report.error = await call(readonly.client, "create_highlight", {
    content: "Written through a read-only key: this must be refused.",
  });
} finally {
  await readonly.client.close();
}

process.stdout.write(JSON.stringify(report) + "\n");
