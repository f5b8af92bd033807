import { definePlugin, json, Type } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { openapi } from "../src/index.js";

// The document and the page a plugin's declarations produce, on a real instance.

const notes = definePlugin({
  name: "notes",
  setup(ctx) {
    const Note = Type.Object({ id: Type.String(), text: Type.String() });
    ctx.router.get("/notes/:id", () => json({ id: "1", text: "hi" }), {
      schema: {
        summary: "A note <b>by id</b>",
        params: Type.Object({ id: Type.String({ description: "The note's id" }) }),
        response: { 200: { description: "The note", body: Note } },
      },
    });
    ctx.router.post("/notes", () => json({ id: "2", text: "x" }, { status: 201 }), {
      schema: {
        summary: "Add a note",
        body: Type.Object({ text: Type.String() }),
        response: { 201: { description: "Added", body: Note, headers: { Location: "Its URL" } } },
      },
    });
    ctx.router.post("/notes/export", () => json({}), { auth: "key", csrf: false, apiKeyHeader: true });
    ctx.router.get("/notes-beta", () => json({}), { feature: "beta", schema: { summary: "Beta", response: {} } });
  },
});

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A JSON document, walked with `at(doc, "paths", "/notes", "post")`. */
type Json = Record<string, unknown>;
const at = (doc: unknown, ...path: string[]): unknown =>
  path.reduce((node, key) => (node as Json | undefined)?.[key], doc);
const documentOf = async (features: string[] = []) => {
  t = await createTestVellum({ plugins: [notes(), openapi()], config: { features } });
  return (await (await t.fetch("/api/v1/openapi.json")).json()) as Json;
};

describe("the document", () => {
  it("turns declarations into operations: path templates, parameters, bodies, responses, security", async () => {
    const doc = await documentOf();
    const get = at(doc, "paths", "/notes/{id}", "get") as Json;
    expect(get.tags).toEqual(["notes"]);
    expect(get.parameters).toEqual([
      { name: "id", in: "path", required: true, description: "The note's id", schema: { type: "string" } },
    ]);
    expect(at(get, "responses", "200", "content", "application/json", "schema", "required")).toEqual(["id", "text"]);
    expect(at(get, "responses", "default")).toEqual({ $ref: "#/components/responses/Error" });
    expect(get.security).toBeUndefined();
    const post = at(doc, "paths", "/notes", "post") as Json;
    expect(at(post, "requestBody", "content", "application/json", "schema", "properties", "text")).toEqual({
      type: "string",
    });
    expect(at(post, "responses", "201", "headers", "Location", "description")).toBe("Its URL");
    expect(post.security).toEqual([{ apiKey: [], csrfToken: [], csrfCookie: [] }]);
    expect(at(doc, "paths", "/notes/export", "post", "security")).toEqual([{ apiKey: [] }, { apiKeyHeader: [] }]);
  });

  it("lists a route declared without a schema, saying so", async () => {
    const doc = await documentOf();
    expect(at(doc, "paths", "/notes/export", "post", "summary")).toBe("POST /notes/export (declared without a schema)");
  });

  it("leaves out a route whose feature is off, and lists it when it is on", async () => {
    expect(at(await documentOf(), "paths", "/notes-beta")).toBeUndefined();
    await t?.close();
    expect(at(await documentOf(["beta"]), "paths", "/notes-beta", "get", "summary")).toBe("Beta");
  });

  it("has unique operation ids", async () => {
    const doc = await documentOf();
    const ids = Object.values(doc.paths as Record<string, Json>).flatMap((item) =>
      Object.values(item).map((op) => at(op, "operationId")),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("the reference page", () => {
  it("is static HTML under a strict CSP, escaped, with relative links", async () => {
    await documentOf();
    const res = await t!.fetch("/docs/api");
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    const html = await res.text();
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain("A note &#60;b&#62;by id&#60;/b&#62;");
    expect(html).toContain('href="../api/v1/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).toContain("<code>POST</code> <code>/notes</code>");
  });
});
