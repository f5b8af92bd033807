type Json = Record<string, unknown>;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const code = (text: string) => `<code>${escapeHtml(text)}</code>`;

const pretty = (value: unknown) => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;

const METHODS = ["get", "post", "put", "patch", "delete"];

function authLine(op: Json): string {
  const security = op.security as Array<Record<string, unknown>> | undefined;
  if (!security) return "public";
  return security.map((option) => Object.keys(option).join(" + ")).join(", or ");
}

function parameterRows(op: Json): string {
  const params = (op.parameters as Json[] | undefined) ?? [];
  if (params.length === 0) return "";
  const rows = params
    .map(
      (p) =>
        `<tr><td>${code(String(p.name))}</td><td>${escapeHtml(String(p.in))}</td><td>${p.required ? "yes" : "no"}</td>` +
        `<td>${code(JSON.stringify(p.schema))}</td><td>${escapeHtml(String(p.description ?? ""))}</td></tr>`,
    )
    .join("");
  return `<table><thead><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
}

function content(entry: Json | undefined): string {
  const media = entry?.content as Record<string, { schema?: unknown }> | undefined;
  if (!media) return "";
  return Object.entries(media)
    .map(([type, { schema }]) => `<p>${code(type)}</p>${pretty(schema)}`)
    .join("");
}

function responseList(op: Json): string {
  const responses = op.responses as Record<string, Json>;
  return Object.entries(responses)
    .filter(([status]) => status !== "default")
    .map(
      ([status, response]) =>
        `<h4>${escapeHtml(status)}: ${escapeHtml(String(response.description))}</h4>${content(response)}`,
    )
    .join("");
}

function operationHtml(method: string, path: string, op: Json): string {
  const id = escapeHtml(String(op.operationId));
  const body = op.requestBody as Json | undefined;
  return `<section id="${id}"><h3><a href="#${id}">${code(method.toUpperCase())} ${code(path)}</a></h3>
<p>${escapeHtml(String(op.summary))}</p>${op.description ? `<p>${escapeHtml(String(op.description))}</p>` : ""}
<p>Auth: ${escapeHtml(authLine(op))}${op.deprecated ? " · deprecated" : ""}</p>
${parameterRows(op)}${body ? `<h4>Request body</h4>${content(body)}` : ""}${responseList(op)}
<p>Any error: the <a href="api/errors">error envelope</a>.</p></section>`;
}

/** Operations grouped by their first tag, in the order the tags first appear. */
function byTag(doc: Json): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const tag = (op.tags as string[])[0] ?? "other";
      if (!groups.has(tag)) groups.set(tag, []);
      groups.get(tag)?.push(operationHtml(method, path, op));
    }
  }
  return groups;
}

/**
 * `/docs/api`: the OpenAPI document as one static HTML page, no script and nothing fetched, so
 * it is served under the same strict CSP as the errors page. Links are relative, so they hold
 * when Vellum is mounted under a prefix.
 */
export function referencePage(doc: Json): string {
  const info = doc.info as { title: string; version: string };
  const groups = byTag(doc);
  const toc = [...groups.keys()].map((tag) => `<a href="#tag-${escapeHtml(tag)}">${escapeHtml(tag)}</a>`).join(" · ");
  const sections = [...groups.entries()]
    .map(([tag, ops]) => `<h2 id="tag-${escapeHtml(tag)}">${escapeHtml(tag)}</h2>${ops.join("\n")}`)
    .join("\n");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(info.title)} reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem}section{border-top:1px solid #ddd;padding:.5rem 0}pre{background:#f6f6f6;padding:.5rem;overflow:auto;font-size:13px}td,th{padding:.2rem .5rem;border-bottom:1px solid #eee;text-align:left;vertical-align:top}h3 a{color:inherit;text-decoration:none}</style></head>
<body><h1>${escapeHtml(info.title)} ${escapeHtml(info.version)}</h1>
<p>Generated from the route declarations of the installed plugins. Machine-readable: <a href="../api/v1/openapi.json">openapi.json</a> (OpenAPI 3.1). Errors: <a href="api/errors">every error code</a>.</p>
<nav>${toc}</nav>
${sections}
</body></html>`;
}
