import { API_ERROR_DESCRIPTIONS, API_ERROR_STATUS, type ApiErrorCode } from "../errors/api-error.js";
import type { RouteSchema } from "./route-schema.js";
import { HTML_CSP } from "./security-headers.js";

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const ERRORS_PAGE_SCHEMA: RouteSchema = {
  summary: "Every error code, its status and meaning, as an HTML page",
  tags: ["docs"],
  response: { 200: { description: "An HTML page with an anchor per code", type: "text/html" } },
};

/** `/docs/api/errors`: one anchored entry per code, so `docs` links in error bodies resolve. */
export function errorsPage(): Response {
  const rows = (Object.keys(API_ERROR_STATUS) as ApiErrorCode[])
    .map(
      (code) =>
        `<tr id="${code}"><td><code>${code}</code></td><td>${API_ERROR_STATUS[code]}</td><td>${escapeHtml(API_ERROR_DESCRIPTIONS[code])}</td></tr>`,
    )
    .join("\n");
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Vellum API errors</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}td,th{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}</style></head>
<body><h1>API errors</h1><p>Every error body is <code>{"error":{"code","message","request_id","docs"}}</code>.</p>
<table><thead><tr><th>code</th><th>status</th><th>meaning</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
  return new Response(html, {
    headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": HTML_CSP },
  });
}
