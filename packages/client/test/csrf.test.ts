import { afterEach, describe, expect, it } from "vitest";
import { createClient, defaultCookieMode, VellumApiError } from "../src/index.js";
import { API_KEY, browserFetch, recordingFetch, type RunningVellum, startVellum } from "./support.js";

// The CSRF token: fetched once, sent as cookie and header (or by the browser), refreshed once when refused.

let servers: RunningVellum[] = [];

afterEach(async () => {
  for (const server of servers) await server.close();
  servers = [];
});

async function start(...args: Parameters<typeof startVellum>): Promise<RunningVellum> {
  const server = await startVellum(...args);
  servers.push(server);
  return server;
}

const article = (slug: string) => ({ title: slug, slug, content: `<p>${slug}</p>` });

describe("CSRF", () => {
  it("refreshes a token the service stopped accepting (restarted with another secret) once, and retries the write", async () => {
    const first = await start({ config: { security: { csrfSecret: "first-secret-0123456789abcdef-0123" } } });
    const recorder = recordingFetch();
    const client = createClient({ baseUrl: first.url, apiKey: API_KEY, fetch: recorder.fetch });
    await client.articles.create(article("before-restart"));
    const old = await client.csrf.token();

    await first.close();
    servers = [];
    await start({ port: first.port, config: { security: { csrfSecret: "second-secret-0123456789abcdef-012" } } });
    recorder.requests.length = 0;
    await expect(client.articles.create(article("after-restart"))).resolves.toMatchObject({ status: "queued" });

    expect(recorder.paths()).toEqual(["POST /api/v1/articles", "GET /api/v1/csrf", "POST /api/v1/articles"]);
    const fresh = await client.csrf.token();
    expect(fresh).not.toBe(old);
    expect(recorder.requests.map((r) => r.headers.get("x-csrf-token"))).toEqual([old, null, fresh]);
  });

  it("concurrent writes share one token fetch", async () => {
    const server = await start();
    const recorder = recordingFetch();
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, fetch: recorder.fetch });
    await Promise.all(["c1", "c2", "c3"].map((slug) => client.articles.create(article(slug))));
    expect(recorder.paths().filter((p) => p === "GET /api/v1/csrf")).toHaveLength(1);
  });

  it("browser mode lets the browser keep and send the cookie, and never sets Cookie itself", async () => {
    const server = await start();
    const browser = browserFetch();
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, cookies: "browser", fetch: browser.fetch });
    const created = await client.articles.create(article("from-a-page")).applied();
    expect(created.slug).toBe("from-a-page");
    expect(browser.jar.get("svc_csrf")).toBe(await client.csrf.token());
    expect(browser.pageSetCookie).toBe(0);
  });

  it("manual mode where no cookie reaches the service: one refresh, then the csrf_failed error", async () => {
    const server = await start();
    // A browser drops the Cookie header a page sets: manual mode in a browser fails this way.
    const recorder = recordingFetch(browserFetch().fetch);
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, cookies: "manual", fetch: recorder.fetch });
    const error = await client.cache.purge("anything").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VellumApiError);
    expect(error).toMatchObject({ status: 403, code: "csrf_failed", requestId: expect.any(String) });
    expect(recorder.paths()).toEqual([
      "GET /api/v1/csrf",
      "POST /api/v1/cache/purge",
      "GET /api/v1/csrf",
      "POST /api/v1/cache/purge",
    ]);
    expect(recorder.requests.every((r) => r.credentials === undefined)).toBe(true);
  });

  it("the default mode is browser where a document or WorkerGlobalScope exists, else manual", () => {
    expect(defaultCookieMode()).toBe("manual");
    expect(defaultCookieMode({ document: {} })).toBe("browser");
    expect(defaultCookieMode({ WorkerGlobalScope: class {} })).toBe("browser");
  });
});
