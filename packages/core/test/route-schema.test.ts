import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { definePlugin, json, readJsonBody, slugSchema, Type } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";

// The kernel checks a route's declared query and JSON body before its handler runs, and answers
// the contract's errors: `invalid_parameter` for the query, `validation_failed` with a detail per
// field for the body, and a property's own code (`x-error-code`) for a value of the wrong form.

let t: TestVellum;
const seen: unknown[] = [];

const shelf = definePlugin({
  name: "shelf",
  setup(ctx) {
    ctx.router.get("/shelf", (event) => json({ limit: Number(event.url.searchParams.get("limit") ?? 10) }), {
      schema: {
        summary: "A page of books",
        query: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
          sort: Type.Optional(Type.Enum(["title", "year"])),
        }),
        response: { 200: { description: "ok", body: Type.Object({ limit: Type.Integer() }) } },
      },
    });
    ctx.router.post(
      "/shelf",
      async (event) => {
        const body = await readJsonBody(event);
        seen.push(body);
        return json({ ok: true }, { status: 201 });
      },
      {
        auth: "none",
        schema: {
          summary: "Add a book",
          body: Type.Object({
            title: Type.String({ minLength: 1, maxLength: 5 }),
            slug: slugSchema(),
            authors: Type.Optional(Type.Array(Type.String(), { maxItems: 2 })),
            meta: Type.Optional(Type.Object({ year: Type.Integer() })),
          }),
          response: { 201: { description: "Added" } },
        },
      },
    );
  },
});

beforeAll(async () => {
  t = await createTestVellum({ plugins: [shelf()] });
});

afterAll(async () => {
  await t.close();
});

const post = (body: unknown) => t.fetch("/shelf", { method: "POST", json: body });
const errorOf = async (res: Response): Promise<Record<string, unknown>> => ({
  status: res.status,
  ...((await res.json()) as { error: Record<string, unknown> }).error,
});

describe("query", () => {
  it("converts declared parameters from text and passes valid ones", async () => {
    expect(await (await t.fetch("/shelf?limit=7&sort=year&other=x")).json()).toEqual({ limit: 7 });
  });

  it.each(["0", "51", "2.5", "ten", ""])("limit=%s is invalid_parameter naming the parameter", async (limit) => {
    const error = await errorOf(await t.fetch(`/shelf?limit=${limit}`));
    expect(error).toMatchObject({ status: 400, code: "invalid_parameter" });
    expect(error.message).toMatch(/^limit /);
  });

  it("an enumeration lists its values", async () => {
    const error = await errorOf(await t.fetch("/shelf?sort=price"));
    expect(error.message).toBe("sort must be one of title, year.");
  });
});

describe("JSON body", () => {
  it("hands the handler the body it validated", async () => {
    const body = { title: "Dune", slug: "dune", authors: ["Herbert"] };
    expect((await post(body)).status).toBe(201);
    expect(seen.at(-1)).toEqual(body);
  });

  it("reports every field at once, in the declared order, with field paths", async () => {
    const error = await errorOf(await post({ meta: { year: "x" }, authors: ["a", 3, "c"], title: "" }));
    expect(error).toMatchObject({ status: 400, code: "validation_failed" });
    expect(error.details).toEqual([
      { field: "title", message: "must not be empty" },
      { field: "slug", message: "is required" },
      { field: "authors[1]", message: "must be a string" },
      { field: "authors", message: "must have at most 2 items" },
      { field: "meta.year", message: "must be an integer" },
    ]);
  });

  it("counts characters, not UTF-16 units", async () => {
    expect((await post({ title: "😀😀😀😀😀", slug: "emoji" })).status).toBe(201);
    const error = await errorOf(await post({ title: "😀😀😀😀😀😀", slug: "emoji" }));
    expect(error.details).toEqual([{ field: "title", message: "must be at most 5 characters" }]);
  });

  it("a string of the wrong form gets its own code, over the other problems", async () => {
    const error = await errorOf(await post({ title: 5, slug: "Not A Slug" }));
    expect(error).toMatchObject({ status: 400, code: "invalid_slug" });
    expect(error.message).toMatch(/lowercase alphanumeric/);
  });

  it("a value of the wrong type stays validation_failed even where a code is named", async () => {
    const error = await errorOf(await post({ title: "ok", slug: 5 }));
    expect(error).toMatchObject({
      code: "validation_failed",
      details: [{ field: "slug", message: "must be a string" }],
    });
  });

  it.each([
    ["an array", "[1]", "invalid_json"],
    ["a string", '"x"', "invalid_json"],
    ["broken JSON", "{", "invalid_json"],
  ])("%s as the body is %s before any schema check", async (_name, raw, code) => {
    const res = await t.fetch("/shelf", { method: "POST", body: raw, headers: { "content-type": "application/json" } });
    expect(await errorOf(res)).toMatchObject({ status: 400, code });
  });

  it("a body that is not JSON is 415", async () => {
    const res = await t.fetch("/shelf", { method: "POST", body: "title=x", headers: { "content-type": "text/plain" } });
    expect(await errorOf(res)).toMatchObject({ status: 415, code: "unsupported_media_type" });
  });
});
