import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

/**
 * Bare `node:http` replaying responses captured from another server byte for byte: the same status,
 * the same headers in the same order (the request id too, so a fixed value of the same length) and
 * the same body, each prepared once at start. The ceiling for a response cache that sends exactly
 * what Vellum's cache sends, without any of the kernel's per-request work. `node:http` adds `Date`,
 * `Connection` and `Keep-Alive` itself, as it does for Vellum.
 * The file is JSON: `{ "<path and query>": { "status": 200, "headers": ["name", "value", …], "body": "<base64>" } }`.
 * Usage: node replay.mjs --port <n> --responses <file>
 */
const { values } = parseArgs({ options: { port: { type: "string" }, responses: { type: "string" } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port <= 0 || !values.responses) {
  console.error("replay: pass --port <n> --responses <file>");
  process.exit(2);
}

/** @type {Map<string, { status: number, headers: string[], body: Buffer }>} */
const responses = new Map();
for (const [url, response] of Object.entries(JSON.parse(readFileSync(values.responses, "utf8")))) {
  responses.set(url, {
    status: response.status,
    headers: response.headers,
    body: Buffer.from(response.body, "base64"),
  });
}
const live = JSON.stringify({ live: true });

createServer((req, res) => {
  const response = responses.get(req.url ?? "/");
  if (response) {
    res.writeHead(response.status, response.headers);
    res.end(response.body);
    return;
  }
  const body = req.url === "/health/live" ? live : "{}";
  res.writeHead(body === live ? 200 : 404, { "content-type": "application/json", "content-length": body.length });
  res.end(body);
}).listen(port, "127.0.0.1");
