import { definePlugin, type H3Event, HTML_CSP, mountPrefix, rawJson, type RouteRecord, text, Type } from "@vellum/core";
import { openApiDocument } from "./document.js";
import { referencePage } from "./page.js";

export const OPENAPI_PATH = "/api/v1/openapi.json";
export const REFERENCE_PATH = "/docs/api";

/**
 * OpenAPI: `GET /api/v1/openapi.json`, the OpenAPI 3.1 document of every route the installed
 * plugins declare (generated from the same `schema` the kernel validates requests with), and
 * `GET /docs/api`, the same document as a static HTML page. Routes behind a feature flag that is
 * off are left out, as they answer 404. Both are built once per mount prefix (the
 * document's `servers`), on the first request after start, when every route is registered.
 */
export const openapi = definePlugin({
  name: "openapi",
  setup(ctx) {
    const built = new Map<string, { json: string; html: string }>();
    const exists = (route: RouteRecord) => !route.meta.feature || ctx.features.has(route.meta.feature);
    const build = (event: H3Event) => {
      const server = mountPrefix(event) || "/";
      const found = built.get(server);
      if (found) return found;
      const routes = ctx.kernel.routes().filter(exists);
      const doc = openApiDocument({ title: "Vellum API", version: ctx.kernel.version, server, routes });
      const made = { json: JSON.stringify(doc), html: referencePage(doc) };
      built.set(server, made);
      return made;
    };

    ctx.router.get(OPENAPI_PATH, (event) => rawJson(build(event).json, { headers: { "cache-control": "no-cache" } }), {
      schema: {
        summary: "This API as an OpenAPI 3.1 document",
        tags: ["docs"],
        response: {
          200: { description: "The OpenAPI document", body: Type.Object({ openapi: Type.Literal("3.1.0") }) },
        },
      },
    });
    ctx.router.get(
      REFERENCE_PATH,
      (event) =>
        text(build(event).html, {
          headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": HTML_CSP },
        }),
      {
        csrfCookie: true,
        schema: {
          summary: "This API's reference, as a static HTML page",
          tags: ["docs"],
          response: { 200: { description: "The reference page", type: "text/html" } },
        },
      },
    );
  },
});
