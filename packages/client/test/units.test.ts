import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../src/api-error.js";
import { CsrfTokens } from "../src/csrf.js";
import { joinUrl, parseBaseUrl, segment } from "../src/url.js";

// The pieces that need no server: URL joining, Retry-After, the token cache, and what the sources may use.

describe("URLs", () => {
  const join = (base: string, path: string, query = {}) => joinUrl(parseBaseUrl(base), path, query).href;

  it("joins every path under the base URL's mount prefix, with or without a trailing slash", () => {
    expect(join("http://h:3000", "/health")).toBe("http://h:3000/health");
    expect(join("http://h:3000/", "/health")).toBe("http://h:3000/health");
    expect(join("https://h/cms", "/api/v1/articles")).toBe("https://h/cms/api/v1/articles");
    expect(join("https://h/a/cms//", "/api/v1/articles")).toBe("https://h/a/cms/api/v1/articles");
  });

  it("sets the defined query parameters only, encoded", () => {
    expect(join("http://h/cms", "/api/v1/search", { q: "a&b c", limit: 5, offset: undefined })).toBe(
      "http://h/cms/api/v1/search?q=a%26b+c&limit=5",
    );
  });

  it("keeps a segment inside its segment", () => {
    expect(segment("a/b?c#d")).toBe("a%2Fb%3Fc%23d");
    for (const bad of ["", ".", ".."]) expect(() => segment(bad)).toThrow(TypeError);
  });
});

describe("Retry-After", () => {
  it("reads seconds and HTTP dates", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("7", now)).toBe(7);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now)).toBe(30);
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe("the token cache", () => {
  function loader() {
    let n = 0;
    const calls = { count: 0 };
    const load = async () => {
      calls.count++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return `token-${++n}`;
    };
    return { load, calls };
  }

  it("writes refused with the same stale token share one refresh", async () => {
    const { load, calls } = loader();
    const tokens = new CsrfTokens(load);
    const stale = await tokens.token();
    const renewed = await Promise.all([tokens.refresh(stale), tokens.refresh(stale), tokens.refresh(stale)]);
    expect(renewed).toEqual(["token-2", "token-2", "token-2"]);
    expect(await tokens.refresh(stale)).toBe("token-2");
    expect(calls.count).toBe(2);
    expect(await tokens.refresh()).toBe("token-3");
  });

  it("forgets a failed fetch, so the next call tries again", async () => {
    let fail = true;
    const tokens = new CsrfTokens(async () => {
      if (fail) throw new Error("offline");
      return "token";
    });
    await expect(tokens.token()).rejects.toThrow("offline");
    fail = false;
    expect(await tokens.token()).toBe("token");
  });
});

describe("the sources", () => {
  const dir = new URL("../src/", import.meta.url);
  const sources = readdirSync(dir).map((name) => readFileSync(new URL(name, dir), "utf8"));

  it("use no Node module or global, so they run in browsers", () => {
    for (const text of sources) {
      expect(text).not.toMatch(/from "node:|import\("node:|\brequire\(|\bprocess\.|\bBuffer\b/);
    }
  });

  it("import nothing outside the package", () => {
    for (const text of sources) {
      for (const [, spec] of text.matchAll(/from "([^"]+)"/g)) expect(spec).toMatch(/^\.\//);
    }
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependencies).toBeUndefined();
  });
});
