import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { articles } from "@vellum/plugin-articles";
import { health } from "@vellum/plugin-health";
import { type DeliveryView, type WebhooksOptions, webhooks } from "@vellum/plugin-webhooks";
import { signWebhook, verifyWebhook } from "@vellum/plugin-webhooks/verify";
import { afterEach, describe, expect, it } from "vitest";
import { ARTICLES, commandIO, createArticle, metric, waitFor } from "./support.js";
import { type Received, startReceiver, type TestReceiver } from "./webhook-receiver.js";

// Webhooks end to end: a real instance (SQLite file, queue workers) with the articles and webhooks plugins,
// delivering to real receiver servers on 127.0.0.1.

const SECRET = "webhook-test-secret-0123456789";
const ADMIN = { authorization: "Bearer test-api-key-0123456789abcdef" };

let t: TestVellum | undefined;
const receivers: TestReceiver[] = [];

afterEach(async () => {
  await t?.close();
  t = undefined;
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(path?: string): Promise<TestReceiver> {
  const started = await startReceiver(path);
  receivers.push(started);
  return started;
}

async function boot(urls: string[], options: Partial<WebhooksOptions> = {}): Promise<TestVellum> {
  t = await createTestVellum({
    plugins: [
      articles({ retryBaseMs: 5 }),
      webhooks({ urls, secret: SECRET, retrySchedule: ["40ms", "40ms"], timeoutMs: 2000, ...options }),
      health(),
    ],
  });
  return t;
}

interface EventBody {
  id: string;
  type: string;
  created_at: string;
  data: { article: Record<string, unknown> };
}

const event = (r: Received) => JSON.parse(r.body) as EventBody;

async function put(slug: string, patch: Record<string, unknown>): Promise<Response> {
  return t!.fetch(`${ARTICLES}/${slug}`, { method: "PUT", json: patch, headers: await t!.writeHeaders() });
}

async function remove(slug: string): Promise<Response> {
  return t!.fetch(`${ARTICLES}/${slug}`, { method: "DELETE", headers: await t!.writeHeaders() });
}

async function deliveries(query = ""): Promise<{ deliveries: DeliveryView[]; next: string | null }> {
  const res = await t!.fetch(`/admin/webhooks/deliveries${query}`, { headers: ADMIN });
  expect(res.status).toBe(200);
  return (await res.json()) as { deliveries: DeliveryView[]; next: string | null };
}

describe("webhooks: events, signatures and retries", () => {
  it("delivers create, update and delete with contract §7's body and headers, signed so verify accepts it", async () => {
    const hook = await receiver();
    await boot([hook.url]);
    await createArticle(t!, "first", ["news"]);
    expect((await put("first", { title: "Renamed" })).status).toBe(200);
    expect((await remove("first")).status).toBe(204);
    await waitFor(() => hook.received.length === 3, "three deliveries");

    const [created, updated, deleted] = hook.received.map(event) as [EventBody, EventBody, EventBody];
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      type: "article.created",
      created_at: expect.any(String),
      data: {
        article: {
          id: expect.any(String),
          title: "Title of first",
          slug: "first",
          content: "<p>Body of first</p>",
          tags: ["news"],
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      },
    });
    expect(updated).toMatchObject({ type: "article.updated", data: { article: { slug: "first", title: "Renamed" } } });
    expect(deleted).toEqual({
      id: expect.any(String),
      type: "article.deleted",
      created_at: expect.any(String),
      data: { article: { id: created.data.article.id, slug: "first" } },
    });

    for (const [i, r] of hook.received.entries()) {
      const body = event(r);
      expect(r.headers).toMatchObject({
        "content-type": "application/json",
        "x-service-event": body.type,
        "x-service-delivery": body.id,
        "x-service-timestamp": expect.stringMatching(/^\d+$/),
        "x-service-signature": expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
      });
      expect(Math.abs(Number(r.headers["x-service-timestamp"]) - Date.now() / 1000)).toBeLessThan(5);
      expect(verifyWebhook(r.body, r.headers, SECRET)).toMatchObject({ ok: true });
      // The same connection carries every delivery to a receiver (keep-alive).
      expect(r.port).toBe(hook.received[0]?.port);
      expect(i).toBe(["article.created", "article.updated", "article.deleted"].indexOf(body.type));
    }

    const first = hook.received[0] as Received;
    const flipped = first.body.replace('"first"', '"firsu"');
    expect(flipped).not.toBe(first.body);
    expect(verifyWebhook(flipped, first.headers, SECRET)).toEqual({ ok: false, reason: "mismatch" });
    expect(verifyWebhook(first.body, first.headers, "another-secret-0123456789")).toEqual({
      ok: false,
      reason: "mismatch",
    });
    const stale = Math.floor(Date.now() / 1000) - 301;
    const staleHeaders = {
      "x-service-timestamp": String(stale),
      "x-service-signature": signWebhook(SECRET, stale, first.body),
    };
    expect(verifyWebhook(first.body, staleHeaders, SECRET)).toEqual({ ok: false, reason: "stale" });
  });

  it("sends nothing for a change that does not commit", async () => {
    const hook = await receiver();
    await boot([hook.url]);
    await createArticle(t!, "taken");
    await createArticle(t!, "other");
    expect((await put("other", { slug: "taken" })).status).toBe(409);
    expect((await put("missing", { title: "x" })).status).toBe(404);
    expect((await remove("missing")).status).toBe(404);
    expect((await put("other", { title: "" })).status).toBe(400);
    expect((await put("other", { title: "Changed" })).status).toBe(200);
    await waitFor(() => hook.received.length === 3, "three deliveries");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hook.received.map((r) => event(r).type)).toEqual(["article.created", "article.created", "article.updated"]);
  });

  it("redelivers the same event after two 500s, then lists it delivered after three attempts", async () => {
    const hook = await receiver();
    hook.answer((n) => ({ status: n < 2 ? 500 : 200 }));
    await boot([hook.url]);
    await createArticle(t!, "flaky");
    await waitFor(() => hook.received.length === 3, "three attempts");
    const ids = hook.received.map((r) => r.headers["x-service-delivery"]);
    expect(new Set(ids).size).toBe(1);
    expect(new Set(hook.received.map((r) => r.body)).size).toBe(1);
    await waitFor(async () => (await deliveries()).deliveries[0]?.status === "delivered", "delivered");
    const [listed] = (await deliveries()).deliveries;
    expect(listed).toMatchObject({
      event_id: ids[0],
      event: "article.created",
      receiver: new URL(hook.url).host,
      status: "delivered",
      attempts: 3,
      response_code: 200,
      last_error: `HTTP 500 from ${new URL(hook.url).host}`,
      next_attempt_at: null,
    });
    expect(await metric(t!, "service_webhook_deliveries_total", { outcome: "failed" })).toBe(2);
    expect(await metric(t!, "service_webhook_deliveries_total", { outcome: "delivered" })).toBe(1);
  });

  it("dead-letters a delivery that always fails, shows it in health and metrics, and a replay delivers it once", async () => {
    const hook = await receiver();
    hook.answer(() => ({ status: 503 }));
    await boot([hook.url]);
    await createArticle(t!, "doomed");
    await waitFor(async () => (await deliveries("?status=dead")).deliveries.length === 1, "dead letter");
    expect(hook.received).toHaveLength(3);
    const [dead] = (await deliveries("?status=dead")).deliveries;
    expect(dead).toMatchObject({ status: "dead", attempts: 3, response_code: 503 });
    expect(await metric(t!, "service_dead_letter_queue_size", { queue: "webhooks:deliveries" })).toBe(1);
    expect(await metric(t!, "service_webhook_deliveries_total", { outcome: "dead" })).toBe(1);

    const health = (await (await t!.fetch("/health/dependencies")).json()) as {
      status: string;
      dependencies: { webhooks: Record<string, unknown> };
    };
    expect(health.status).toBe("degraded");
    expect(health.dependencies.webhooks).toEqual({
      status: "degraded",
      enabled: true,
      receivers: [
        {
          name: new URL(hook.url).host,
          state: "dead_letters",
          pending: 0,
          retrying: 0,
          dead_letters: 1,
          last_success_at: null,
        },
      ],
      fan_out: { waiting: 0, dead: 0 },
    });
    const text = JSON.stringify(health);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("/hook");

    const printed: string[] = [];
    const unknown = commandIO(printed, { receiver: "elsewhere.example" });
    expect(await t!.vellum.runCommand("webhooks replay", unknown)).toBe(2);
    expect(
      await t!.vellum.runCommand("webhooks replay", commandIO(printed, { id: "01J00000000000000000000000" })),
    ).toBe(0);
    expect(printed).toEqual([
      "webhooks replay: no configured receiver is named 'elsewhere.example' (see SERVICE_WEBHOOK_URLS)",
      "webhooks replay: 0 dead deliveries queued again",
    ]);

    hook.answer(() => ({ status: 204 }));
    const replay = await t!.fetch("/admin/webhooks/replay", { method: "POST", headers: ADMIN });
    expect(await replay.json()).toEqual({ replayed: 1 });
    await waitFor(() => hook.received.length === 4, "the replayed delivery");
    await waitFor(async () => (await deliveries()).deliveries[0]?.status === "delivered", "delivered");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hook.received).toHaveLength(4);
    expect(hook.received[3]?.headers["x-service-delivery"]).toBe(dead?.event_id);
    const after = (await (await t!.fetch("/health/webhooks")).json()) as { receivers: Array<Record<string, unknown>> };
    expect(after.receivers[0]).toMatchObject({ state: "ok", dead_letters: 0, last_success_at: expect.any(String) });

    // `vellum webhooks replay --receiver <url>` requeues that receiver's dead deliveries.
    hook.answer(() => ({ status: 503 }));
    await createArticle(t!, "doomed-again");
    await waitFor(async () => (await deliveries("?status=dead")).deliveries.length === 1, "a second dead letter");
    hook.answer(() => ({ status: 204 }));
    const io = commandIO(printed, { receiver: hook.url });
    expect(await t!.vellum.runCommand("webhooks replay", io)).toBe(0);
    expect(printed.at(-1)).toBe("webhooks replay: 1 dead delivery queued again");
    await waitFor(async () => (await deliveries("?status=dead")).deliveries.length === 0, "the replayed delivery");
  });

  it("does not follow a redirect: a 3xx is retried like any failure", async () => {
    const target = await receiver();
    const hook = await receiver();
    hook.answer(() => ({ status: 307, headers: { location: target.url } }));
    await boot([hook.url]);
    await createArticle(t!, "moved");
    await waitFor(async () => (await deliveries("?status=dead")).deliveries.length === 1, "dead letter");
    expect(target.received).toHaveLength(0);
    expect((await deliveries()).deliveries[0]).toMatchObject({
      response_code: 307,
      last_error: `HTTP 307 from ${new URL(hook.url).host} (redirects are not followed)`,
    });
  });

  it("retries a fan-out the database refuses, dead-letters it, and a replay sends its events in order", async () => {
    const hook = await receiver();
    await boot([hook.url]);
    // A real refusal by SQLite (not a full disk or a lock, which wait without counting): no delivery may be written.
    const sqlite = new Database(join(t!.dataDir, "db", "vellum.sqlite"));
    try {
      sqlite.exec(`CREATE TRIGGER refuse_deliveries BEFORE INSERT ON _vellum_jobs
        WHEN NEW.queue = 'webhooks:deliveries' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
      await createArticle(t!, "held-1");
      expect((await put("held-1", { title: "Second" })).status).toBe(200);
      const fanOut = async () =>
        (await (await t!.fetch("/health/webhooks")).json()) as { state: string; fan_out: Record<string, number> };
      await waitFor(async () => (await fanOut()).fan_out.dead === 2, "two dead fan-outs");
      expect(await fanOut()).toMatchObject({ state: "degraded", fan_out: { waiting: 0, dead: 2 } });
      expect(hook.received).toEqual([]);
      expect(await metric(t!, "service_dead_letter_queue_size", { queue: "webhooks:fanout" })).toBe(2);

      sqlite.exec("DROP TRIGGER refuse_deliveries");
      // A replay of one delivery id leaves the fan-outs dead; one without an id requeues them.
      expect(await t!.vellum.runCommand("webhooks replay", commandIO([], { id: "01J00000000000000000000000" }))).toBe(
        0,
      );
      expect((await fanOut()).fan_out.dead).toBe(2);
      const replay = await t!.fetch("/admin/webhooks/replay", { method: "POST", headers: ADMIN });
      expect(await replay.json()).toEqual({ replayed: 2 });
      await waitFor(() => hook.received.length === 2, "the two events");
      expect(hook.received.map((r) => event(r).type)).toEqual(["article.created", "article.updated"]);
      expect(await fanOut()).toMatchObject({ state: "ok", fan_out: { waiting: 0, dead: 0 } });
    } finally {
      sqlite.close();
    }
  });

  it("honours Retry-After: the next attempt waits what the receiver asked, not the schedule", async () => {
    const hook = await receiver();
    hook.answer((n) => (n === 0 ? { status: 503, headers: { "retry-after": "1" } } : { status: 204 }));
    // Retry-After is honoured up to the schedule's longest delay.
    await boot([hook.url], { retrySchedule: ["10ms", "5s"] });
    const started = Date.now();
    await createArticle(t!, "patient");
    await waitFor(() => hook.received.length === 2, "the retry");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });
});

describe("webhooks: order and isolation", () => {
  it("delivers 100 rapid updates of one article in commit order, through failures and retries", async () => {
    const hook = await receiver();
    // Every fifth request fails once: the later events must wait for its retry.
    hook.answer((n) => ({ status: n % 5 === 4 ? 500 : 204 }));
    await boot([hook.url], { retrySchedule: ["5ms", "5ms", "5ms"] });
    await createArticle(t!, "busy");
    const headers = await t!.writeHeaders();
    const updates = await Promise.all(
      Array.from({ length: 100 }, (_, n) =>
        t!.fetch(`${ARTICLES}/busy`, { method: "PUT", json: { title: `v${n + 1}` }, headers }),
      ),
    );
    expect(updates.every((res) => res.status === 200)).toBe(true);
    const committed = await Promise.all(updates.map(async (res) => ((await res.json()) as { title: string }).title));
    await waitFor(
      async () => (await deliveries("?status=pending")).deliveries.length === 0 && hook.received.length > 100,
      "all delivered",
      30_000,
    );
    // The accepted attempts, in the order the receiver accepted them.
    const accepted = hook.received.filter((_, n) => n % 5 !== 4).map(event);
    const titles = accepted.filter((e) => e.type === "article.updated").map((e) => e.data.article.title);
    expect(titles).toHaveLength(100);
    const updatedAt = accepted
      .filter((e) => e.type === "article.updated")
      .map((e) => e.data.article.updated_at as string);
    expect([...updatedAt].sort()).toEqual(updatedAt);
    expect(new Set(titles)).toEqual(new Set(committed));
    expect(accepted[0]?.type).toBe("article.created");
  });

  it("cuts a hanging receiver at the timeout, and it delays neither another receiver nor creates", async () => {
    const stuck = await receiver("/stuck");
    const healthy = await receiver("/ok");
    stuck.answer(() => "hang");
    await boot([stuck.url, healthy.url], { timeoutMs: 3000, retrySchedule: ["60s"] });
    const started = Date.now();
    for (const slug of ["a1", "a2", "a3", "a4", "a5"]) await createArticle(t!, slug);
    await waitFor(() => healthy.received.length === 5, "the healthy receiver's five events");
    // All five creates were applied and delivered elsewhere while the first delivery to the stuck one hangs.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(stuck.received).toHaveLength(1);
    await waitFor(
      async () =>
        (await deliveries(`?receiver=${encodeURIComponent(stuck.url)}&status=pending`)).deliveries.some(
          (d) => d.status === "retrying",
        ),
      "the cut attempt",
    );
    const cut = (await deliveries(`?receiver=${encodeURIComponent(stuck.url)}&status=pending`)).deliveries.at(-1);
    expect(cut).toMatchObject({ status: "retrying", attempts: 1, response_code: null });
    expect(cut?.last_error).toMatch(/^timed out after 3000 ms at 127\.0\.0\.1:\d+$/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
  });
});

describe("webhooks: shutdown and restart", () => {
  it("cuts an attempt in flight at shutdown, and sends the event again after a restart", async () => {
    const hook = await receiver();
    hook.answer(() => "hang");
    const dataDir = await mkdtemp(join(tmpdir(), "vellum-webhooks-"));
    try {
      const plugins = () => [
        articles({ retryBaseMs: 5 }),
        webhooks({ urls: [hook.url], secret: SECRET, retrySchedule: ["40ms"], timeoutMs: 60_000 }),
      ];
      const first = await createTestVellum({ plugins: plugins(), dataDir });
      t = first;
      await createArticle(first, "interrupted");
      await waitFor(() => hook.received.length === 1, "the first attempt");
      const closing = Date.now();
      await first.close();
      t = undefined;
      expect(Date.now() - closing).toBeLessThan(5000);
      // The cut attempt is no failure of the receiver's.
      expect(await metric(first, "service_webhook_deliveries_total")).toBe(0);

      hook.answer(() => ({ status: 204 }));
      t = await createTestVellum({ plugins: plugins(), dataDir });
      await waitFor(() => hook.received.length === 2, "the event sent again");
      expect(hook.received[1]?.headers["x-service-delivery"]).toBe(hook.received[0]?.headers["x-service-delivery"]);
      await waitFor(async () => (await deliveries()).deliveries[0]?.status === "delivered", "delivered");
      // The cut attempt did not use up one of the delivery's attempts.
      expect((await deliveries()).deliveries[0]).toMatchObject({
        attempts: 1,
        last_error: `interrupted by shutdown at ${new URL(hook.url).host}`,
      });
    } finally {
      await t?.close();
      t = undefined;
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("webhooks: the operator routes", () => {
  it("pages the deliveries list, filters it, and refuses bad parameters with the contract's errors", async () => {
    const one = await receiver("/one");
    // A second receiver on the same host (another path): named `<host>#2`.
    const two = one.url.replace("/one", "/two");
    await boot([one.url, two]);
    for (const slug of ["p1", "p2", "p3"]) await createArticle(t!, slug);
    await waitFor(() => one.received.length === 6, "six deliveries");
    await waitFor(async () => (await deliveries("?status=delivered")).deliveries.length === 6, "six delivered");

    const page1 = await deliveries("?limit=4");
    expect(page1.deliveries).toHaveLength(4);
    expect(page1.next).toBe(page1.deliveries[3]?.id);
    const page2 = await deliveries(`?limit=4&before=${page1.next}`);
    expect(page2.deliveries).toHaveLength(2);
    expect(page2.next).toBeNull();
    const ids = [...page1.deliveries, ...page2.deliveries].map((d) => d.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    const text = JSON.stringify(page1);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("Body of");

    const host = new URL(one.url).host;
    const byHost = await deliveries(`?receiver=${encodeURIComponent(host)}`);
    expect(byHost.deliveries.map((d) => d.receiver)).toEqual(Array(3).fill(host));
    expect((await deliveries(`?receiver=${encodeURIComponent(`${host}#2`)}`)).deliveries).toHaveLength(3);
    const second = await deliveries(`?receiver=${encodeURIComponent(two)}`);
    expect(second.deliveries.map((d) => d.receiver)).toEqual(Array(3).fill(`${host}#2`));

    for (const [query, code] of [
      ["?status=lost", "invalid_parameter"],
      ["?limit=0", "invalid_parameter"],
      ["?before=not-an-id", "invalid_parameter"],
      ["?receiver=nowhere.example", "not_found"],
    ] as const) {
      const res = await t!.fetch(`/admin/webhooks/deliveries${query}`, { headers: ADMIN });
      expect((await res.json()) as unknown).toMatchObject({ error: { code, request_id: expect.any(String) } });
    }
    expect((await t!.fetch("/admin/webhooks/deliveries")).status).toBe(401);
    expect((await t!.fetch("/admin/webhooks/replay", { method: "POST" })).status).toBe(401);
    const badBody = await t!.fetch("/admin/webhooks/replay", { method: "POST", headers: ADMIN, json: { id: 5 } });
    expect(badBody.status).toBe(400);
    const xKey = await t!.fetch("/admin/webhooks/replay", {
      method: "POST",
      headers: { "x-api-key": ADMIN.authorization.slice("Bearer ".length) },
      json: { receiver: one.url },
    });
    expect(await xKey.json()).toEqual({ replayed: 0 });
  });

  it("without receivers: no outbox rows, health says disabled, and start is refused for a URL without a secret", async () => {
    await boot([]);
    await createArticle(t!, "quiet");
    expect((await deliveries()).deliveries).toEqual([]);
    expect(await (await t!.fetch("/health/webhooks")).json()).toMatchObject({ enabled: false, receivers: [] });
    await t!.close();
    t = undefined;
    await expect(
      createTestVellum({ plugins: [articles(), webhooks({ urls: ["http://127.0.0.1:9/hook"] })] }),
    ).rejects.toMatchObject({
      code: "VELLUM_CONFIG_INVALID",
      message: expect.stringContaining("SERVICE_WEBHOOK_SECRET: is required"),
    });
  });
});
