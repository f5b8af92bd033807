import { afterEach, describe, expect, it } from "vitest";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { notesPlugin } from "./fixtures/notes-plugin.js";

let t: TestVellum;
afterEach(async () => t?.close());

describe("smoke", () => {
  it("serves a plugin route and the error envelope", async () => {
    t = await createTestVellum({ plugins: [notesPlugin()] });
    const res = await t.fetch("/api/v1/notes", {
      method: "POST",
      json: { id: "a", body: "x" },
      headers: await t.writeHeaders(),
    });
    console.log(res.status, [...res.headers], await res.text());
    const r2 = await t.fetch("/api/v1/notes/a");
    console.log(r2.status, [...r2.headers], await r2.text());
    const r3 = await t.fetch("/api/v1/notes-boom");
    console.log(r3.status, await r3.text());
    const r4 = await t.fetch("/api/v1/notes/a", { method: "DELETE" });
    console.log(r4.status, [...r4.headers], await r4.text());
    expect(res.status).toBe(201);
  });
});
