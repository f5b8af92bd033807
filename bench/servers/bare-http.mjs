import { createServer } from "node:http";

/** Baseline target: the cheapest possible answer to GET /health/live. Port from `--port <n>` or env PORT. */
const flag = process.argv.indexOf("--port");
const port = Number(flag >= 0 ? process.argv[flag + 1] : process.env.PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error("bare-http: pass --port <n> or set PORT");
  process.exit(2);
}

const live = JSON.stringify({ live: true });

createServer((req, res) => {
  if (req.method === "GET" && req.url === "/health/live") {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(live) });
    res.end(live);
    return;
  }
  res.writeHead(404, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: "not found" }));
}).listen(port, "127.0.0.1");
