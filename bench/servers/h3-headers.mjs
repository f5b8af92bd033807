import { randomBytes } from "node:crypto";
import { H3, serve } from "h3";
import { FastResponse } from "srvx/node";

/**
 * Reference for the kernel target: h3 alone answering GET /health/live with every header a Vellum
 * response carries there (security headers, a fresh request id, a `svc_csrf` cookie for a
 * cookie-less client, JSON content type). No metrics, no pipeline, no auth.
 * Port from `--port <n>`.
 */
const flag = process.argv.indexOf("--port");
const port = Number(flag >= 0 ? process.argv[flag + 1] : Number.NaN);
if (!Number.isInteger(port) || port <= 0) {
  console.error("h3-headers: pass --port <n>");
  process.exit(2);
}

const cookie = `svc_csrf=${randomBytes(16).toString("base64url")}.${randomBytes(32).toString("base64url")}; Path=/; SameSite=Strict`;
const app = new H3();
// The fastest answer h3 allows: srvx's FastResponse with a plain header object (what the kernel uses too).
app.get("/health/live", () => {
  const headers = {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "x-request-id": randomBytes(9).toString("base64url"),
    "set-cookie": cookie,
  };
  return new FastResponse(JSON.stringify({ live: true }), { headers });
});
serve(app, { port, hostname: "127.0.0.1", silent: true });
