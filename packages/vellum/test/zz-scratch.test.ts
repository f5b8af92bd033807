import { createServer } from "node:http";
import { createTestVellum } from "@vellum/core/testing";
import { articles } from "@vellum/plugin-articles";
import { cache } from "@vellum/plugin-cache";
import { health } from "@vellum/plugin-health";
import { it } from "vitest";

it("scratch", async () => {
  const got: Array<{ headers: unknown; body: string }> = [];
  let status = 200;
  const rx = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => { got.push({ headers: req.headers, body }); res.statusCode = status; res.end(); });
  });
  await new Promise<void>((r) => rx.listen(0, "127.0.0.1", r));
  const port = (rx.address() as { port: number }).port;
  const t = await createTestVellum({ plugins: [articles({ retryBaseMs: 5 } as never), cache({ cdnPurgeUrl: `http://127.0.0.1:${port}/purge`, cdnPurgeSecret: "0123456789abcdef0123" }), health()] });
  const h = await t.writeHeaders();
  let r = await t.fetch("/api/v1/articles", { method: "POST", json: { title: "Hello", slug: "hello", content: "<p>x</p>", tags: ["news"] }, headers: h });
  await new Promise((res) => setTimeout(res, 1500));
  console.log("GOT", JSON.stringify(got));
  r = await t.fetch("/api/v1/articles/hello", { method: "PUT", json: { tags: ["sport"] }, headers: h });
  console.log(r.status);
  await new Promise((res) => setTimeout(res, 1500));
  console.log("GOT", JSON.stringify(got));
  for (const [init, ip] of [[{}, "10.0.0.1"], [{ headers: { authorization: h.authorization } , json: { slug: "hello" }}, "10.0.0.2"], [{ headers: h, json: { slug: "Bad Slug" } }, "10.0.0.3"], [{ headers: h, json: {} }, "10.0.0.3"], [{ headers: { ...h, "content-type": "text/plain" }, body: "slug=hello" }, "10.0.0.3"], [{ headers: h, json: { slug: "hello" } }, "10.0.0.4"]] as const) {
    r = await t.fetch("/api/v1/cache/purge", { method: "POST", clientAddress: ip, ...(init as object) });
    console.log("PURGE", r.status, JSON.stringify(Object.fromEntries(r.headers)), await r.text());
  }
  for (let i = 0; i < 6; i++) {
    r = await t.fetch("/api/v1/cache/purge", { method: "POST", clientAddress: "10.0.0.9", headers: h, json: { slug: "hello" } });
    console.log("RL", i, r.status, r.headers.get("retry-after"));
  }
  status = 500;
  r = await t.fetch("/api/v1/cache/purge", { method: "POST", clientAddress: "10.0.0.10", headers: h, json: { slug: "hello" } });
  await new Promise((res) => setTimeout(res, 1500));
  console.log(JSON.stringify(await t.vellum.db().selectFrom("_vellum_jobs").selectAll().where("queue", "=", "cache:cdn").execute()));
  console.log(await (await t.fetch("/health/cache")).text());
  await t.close();
  rx.close();
});
