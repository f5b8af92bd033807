import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { createVellum, definePlugin, type RouteRecord } from "@vellum/core";
import type { VellumServer } from "@vellum/core/node";
import { TEST_API_KEY } from "@vellum/core/testing";
import { articles } from "@vellum/plugin-articles";
import { backup } from "@vellum/plugin-backup";
import { cache } from "@vellum/plugin-cache";
import { health } from "@vellum/plugin-health";
import { media } from "@vellum/plugin-media";
import { openapi } from "@vellum/plugin-openapi";
import { search } from "@vellum/plugin-search";
import { webhooks } from "@vellum/plugin-webhooks";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { createConsola } from "consola";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "./support.js";

// Every documented operation is called over real HTTP on a server running every first-party
// plugin (with the beta features on), and each answer is checked against the schema the OpenAPI
// document gives for its status. An operation the document lists without a call here fails.

type Json = Record<string, unknown>;

let dataDir: string;
let routes: () => readonly RouteRecord[];
let server: VellumServer;
let doc: Json;
let csrf: string;
const ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
addFormats.default(ajv);

const write = (extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${TEST_API_KEY}`,
  cookie: `svc_csrf=${csrf}`,
  "x-csrf-token": csrf,
  ...extra,
});
const key = { authorization: `Bearer ${TEST_API_KEY}` };
const call = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, init);
const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = write()) =>
  call(path, {
    method,
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function createArticle(slug: string): Promise<string> {
  const res = await send("POST", "/api/v1/articles", {
    title: `About ${slug}`,
    slug,
    content: "<p>Hi</p>",
    tags: ["t"],
  });
  const { id } = (await res.json()) as { id: string };
  await waitFor(async () => ((await (await call(`/api/v1/jobs/${id}`)).json()) as Json).status === "applied", id);
  return id;
}

let mediaFile = "";
let jobId = "";

/** One call per documented operation, keyed `METHOD /openapi/{path}`. */
const calls: Record<string, () => Promise<Response>> = {
  "GET /docs/api/errors": () => call("/docs/api/errors"),
  "GET /api/v1/csrf": () => call("/api/v1/csrf"),
  "GET /api/v1/jobs/{id}": () => call(`/api/v1/jobs/${jobId}`),
  "GET /api/v1/articles": () => call("/api/v1/articles?limit=1"),
  "POST /api/v1/articles": () =>
    send("POST", "/api/v1/articles", { title: "New", slug: "brand-new", content: "<p>x</p>" }),
  "GET /api/v1/articles/{slug}": () => call("/api/v1/articles/first"),
  "PUT /api/v1/articles/{slug}": () => send("PUT", "/api/v1/articles/first", { title: "Renamed" }),
  "DELETE /api/v1/articles/{slug}": () => send("DELETE", "/api/v1/articles/second"),
  "GET /api/v1/search": () => call("/api/v1/search?q=about"),
  "POST /admin/reindex": () => send("POST", "/admin/reindex", undefined, key),
  "GET /admin/reindex": () => call("/admin/reindex", { headers: key }),
  "GET /api/v1/ai/related/{slug}": () => call("/api/v1/ai/related/first"),
  "POST /api/v1/ai/suggest-tags": () => send("POST", "/api/v1/ai/suggest-tags", { title: "About first" }),
  "POST /api/v1/cache/purge": () => send("POST", "/api/v1/cache/purge", { slug: "first" }),
  "GET /admin/webhooks/deliveries": () => call("/admin/webhooks/deliveries?limit=5", { headers: key }),
  "POST /admin/webhooks/replay": () => send("POST", "/admin/webhooks/replay", undefined, key),
  "POST /admin/backup/drill": () => send("POST", "/admin/backup/drill", undefined, key),
  "POST /api/v1/media": async () => {
    const png = await sharp({ create: { width: 4, height: 3, channels: 3, background: "#c33" } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set("file", new Blob([new Uint8Array(png)], { type: "image/png" }), "dot.png");
    const res = await call("/api/v1/media", { method: "POST", headers: write(), body: form });
    mediaFile =
      new URL(((await res.clone().json()) as { url: string }).url, server.url).pathname.split("/").pop() ?? "";
    return res;
  },
  "GET /media/{file}": () => call(`/media/${mediaFile}`),
  "POST /api/v1/admin/cleanup-orphans": () => send("POST", "/api/v1/admin/cleanup-orphans"),
  "GET /health": () => call("/health"),
  "GET /health/live": () => call("/health/live"),
  "GET /health/ready": () => call("/health/ready"),
  "GET /health/db": () => call("/health/db"),
  "GET /health/workers": () => call("/health/workers"),
  "GET /health/storage": () => call("/health/storage"),
  "GET /health/dependencies": () => call("/health/dependencies"),
  "GET /health/migrations": () => call("/health/migrations"),
  "GET /health/ethics": () => call("/health/ethics"),
  "GET /health/security": () => call("/health/security"),
  "GET /health/ai": () => call("/health/ai"),
  "GET /health/{component}": () => call("/health/search"),
  "GET /metrics": () => call("/metrics"),
  "GET /api/v1/openapi.json": () => call("/api/v1/openapi.json"),
  "GET /docs/api": () => call("/docs/api"),
};

/** Calls that must answer an error, checked against the error envelope the document gives. */
const errorCalls: Array<[string, () => Promise<Response>, number]> = [
  ["GET /api/v1/articles/{slug}", () => call("/api/v1/articles/missing"), 404],
  ["GET /api/v1/articles", () => call("/api/v1/articles?limit=0"), 400],
  ["POST /api/v1/articles", () => send("POST", "/api/v1/articles", { slug: "x" }), 400],
  [
    "POST /api/v1/articles",
    () => send("POST", "/api/v1/articles", { title: "T", slug: "first", content: "c" }, key),
    403,
  ],
  ["GET /api/v1/jobs/{id}", () => call("/api/v1/jobs/NOPE"), 404],
];

function operations(): Array<{ name: string; op: Json }> {
  const found: Array<{ name: string; op: Json }> = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item))
      found.push({ name: `${method.toUpperCase()} ${path}`, op: op as Json });
  }
  return found;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

/** Checks `res` against the response the document gives `name` for its status; returns what failed. */
async function mismatch(name: string, res: Response): Promise<string | undefined> {
  const [method = "", path = ""] = name.split(" ");
  const responses = ((doc.paths as Record<string, Json>)[path]?.[method.toLowerCase()] as Json).responses as Json;
  const status = String(res.status);
  const declared = status in responses ? status : res.status >= 400 ? "default" : undefined;
  if (!declared) return `${name}: status ${status} is not documented (${Object.keys(responses).join(", ")})`;
  const type = (res.headers.get("content-type") ?? "").split(";")[0] ?? "";
  if (res.status === 204 || res.status === 304) return undefined;
  if (!type.endsWith("json")) {
    const content = (responses[declared] as Json).content as Json | undefined;
    return content && type in content ? undefined : `${name}: ${status} ${type} is not a documented media type`;
  }
  const ref =
    declared === "default"
      ? "openapi#/components/schemas/Error"
      : `openapi#/${pointer("paths", path, method.toLowerCase(), "responses", declared, "content", "application/json", "schema")}`;
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  const body: unknown = await res.json();
  return validate(body)
    ? undefined
    : `${name} ${status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 300)}`;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "vellum-openapi-"));
  const target = await mkdtemp(join(tmpdir(), "vellum-openapi-backups-"));
  const probe = definePlugin({
    name: "route-probe",
    setup(ctx) {
      routes = () => ctx.kernel.routes();
    },
  });
  const vellum = createVellum({
    dataDir,
    logger: createConsola({ level: 1 }),
    features: ["ai"],
    security: { apiKey: TEST_API_KEY },
    plugins: [
      articles(),
      search(),
      cache(),
      webhooks({ urls: ["http://127.0.0.1:9/hook"], secret: "s".repeat(32), retrySchedule: ["10ms"] }),
      media(),
      backup({ target, passphrase: "correct horse battery staple" }),
      openapi(),
      health({ expect: ["search", "webhooks", "backup"] }),
      probe(),
    ],
  });
  server = await vellum.listen({ port: 0, host: "127.0.0.1" });
  doc = (await (await call("/api/v1/openapi.json")).json()) as Json;
  ajv.addSchema(doc, "openapi");
  csrf = ((await (await call("/api/v1/csrf")).json()) as { token: string }).token;
  jobId = await createArticle("first");
  await createArticle("second");
}, 60_000);

afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
  });

  it("documents every route the server answers, each with its declared schema", () => {
    const documented = operations().map(({ name }) => name);
    const registered = routes().map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`);
    expect(documented.sort()).toEqual([...new Set(registered)].sort());
    const undeclared = operations().filter(({ op }) => String(op.summary).includes("without a schema"));
    expect(undeclared.map(({ name }) => name)).toEqual([]);
  });

  it("every documented operation answers over HTTP as its schema says", async () => {
    const missing = operations().filter(({ name }) => !(name in calls));
    expect(missing.map(({ name }) => name)).toEqual([]);
    const problems: string[] = [];
    for (const { name } of operations()) {
      const res = await calls[name]?.();
      if (!res) continue;
      expect(res.status, name).toBeLessThan(400);
      const problem = await mismatch(name, res);
      if (problem) problems.push(problem);
    }
    expect(problems).toEqual([]);
  });

  it("errors answer in the envelope the document gives", async () => {
    const problems: string[] = [];
    for (const [name, run, status] of errorCalls) {
      const res = await run();
      expect(res.status, name).toBe(status);
      const problem = await mismatch(name, res);
      if (problem) problems.push(problem);
    }
    expect(problems).toEqual([]);
  });
});
