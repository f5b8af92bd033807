import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { loadSummary } from "../lib/load.mjs";
import { articleBody } from "./articles-data.mjs";

/**
 * Child process of the articles scenario: sustained POST /api/v1/articles, every request a new
 * slug (`<prefix>-<n>`), with the API key and a CSRF cookie fetched first. Prints one JSON line.
 * `--rate` caps the creates per second over all connections (an A/B at the same offered load, where
 * the server's CPU per create compares builds without their throughput moving the batch sizes).
 * `--amount` sends that many creates instead of loading for `--duration` (instruction counts, where a
 * server under callgrind answers slowly: `--timeout` then gives each request longer than 10 s).
 * Usage: node articles-create-load.mjs --url <base> --api-key <key> --prefix <p> --connections <n>
 *   (--duration <s> | --amount <n>) [--rate <n>] [--timeout <s>]
 */
const { values } = parseArgs({
  options: {
    url: { type: "string" },
    "api-key": { type: "string" },
    prefix: { type: "string" },
    connections: { type: "string", default: "50" },
    duration: { type: "string", default: "10" },
    rate: { type: "string" },
    amount: { type: "string" },
    timeout: { type: "string" },
  },
});
const base = values.url;
const { token } = await (await fetch(`${base}/api/v1/csrf`)).json();
if (!token) throw new Error("create load: GET /api/v1/csrf gave no token");

let n = 0;
const result = await autocannon({
  url: base,
  connections: Number(values.connections),
  duration: Number(values.duration),
  ...(values.rate !== undefined && { overallRate: Number(values.rate) }),
  ...(values.amount !== undefined && { amount: Number(values.amount) }),
  ...(values.timeout !== undefined && { timeout: Number(values.timeout) }),
  requests: [
    {
      method: "POST",
      path: "/api/v1/articles",
      headers: {
        authorization: `Bearer ${values["api-key"]}`,
        cookie: `svc_csrf=${token}`,
        "x-csrf-token": token,
        "content-type": "application/json",
      },
      setupRequest(request) {
        const i = n++;
        request.body = JSON.stringify(articleBody(`${values.prefix}-${i}`, i));
        return request;
      },
    },
  ],
});
process.stdout.write(
  `${JSON.stringify({
    ...loadSummary(result),
    accepted: result["2xx"],
    durationSeconds: result.duration,
  })}\n`,
);
