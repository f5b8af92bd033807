import type { TestVellum } from "@vellum/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ARTICLES,
  articleBody,
  bootCached,
  createApplied,
  dbArticles,
  del,
  expectedView,
  isHit,
  jobStatus,
  pageUrl,
  post,
  probe,
  purge,
  put,
  settle,
  tagUrl,
  viewOf,
  waitForJob,
} from "./cache-probe.js";

// Contract §6 ("every write purges what it changed by itself"): each kind of article write removes exactly the
// cached responses that show the article (its page, the list pages, its tags' pages, before and after the change)
// and no other, and once the write is acknowledged every read, hit or miss, answers what the database holds.
//
// Fixture: a (tags x, y), b (z), c (x), created in that order, so the list is c, b, a. Warmed: the three pages, the
// list, the list with limit=2 and its cursor page (a), the tag pages x, y, z and w (w has no article).

const URLS = {
  pageA: pageUrl("a"),
  pageB: pageUrl("b"),
  pageC: pageUrl("c"),
  list: ARTICLES,
  list2: `${ARTICLES}?limit=2`,
  /** Set once the fixture exists: the second page of `list2`. */
  cursor: "",
  tagX: tagUrl("x"),
  tagY: tagUrl("y"),
  tagZ: tagUrl("z"),
  tagW: tagUrl("w"),
};
type Name = keyof typeof URLS;
const NAMES = Object.keys(URLS) as Name[];
/** Every list page carries the `articles` tag (the cursor page too), so every change to any article purges them. */
const LISTS: Name[] = ["list", "list2", "cursor"];

let t: TestVellum;
let urls: Record<Name, string>;

/** Reads `url` and asserts it answers exactly what the database holds now. */
async function expectFresh(url: string): Promise<void> {
  const got = await probe(t, url);
  expect(viewOf(url, got.status, got.body), `GET ${url}`).toEqual(expectedView(url, await dbArticles(t)));
}

/**
 * After a write: the entries named in `purged` are misses (or 404s), every other warmed entry is still a hit, and
 * every read equals the database. Then the purged ones are cached again (a second GET is a hit), so the next step
 * starts from a warm cache.
 */
async function expectPurged(purged: Name[]): Promise<void> {
  const all = await dbArticles(t);
  const outcomes: Record<string, string> = {};
  for (const name of NAMES) {
    const url = urls[name];
    const got = await probe(t, url);
    outcomes[name] = got.outcome;
    expect(viewOf(url, got.status, got.body), `GET ${url} (${name}) after the write`).toEqual(expectedView(url, all));
  }
  const expected = Object.fromEntries(NAMES.map((name) => [name, purged.includes(name) ? "not hit" : "hit"]));
  const seen = Object.fromEntries(NAMES.map((name) => [name, outcomes[name] === "hit" ? "hit" : "not hit"]));
  expect(seen).toEqual(expected);
  for (const name of purged) {
    const again = await probe(t, urls[name]);
    expect(again.outcome, `${name} is cached again`).toBe(again.status === 200 ? "hit" : "uncached");
  }
}

describe("each write purges exactly what it changed", () => {
  beforeEach(async () => {
    t = await bootCached();
    await createApplied(t, "a", { tags: ["x", "y"] });
    await createApplied(t, "b", { tags: ["z"] });
    await createApplied(t, "c", { tags: ["x"] });
    await settle();
    const first = await probe(t, URLS.list2);
    const cursor = (first.body as { next_cursor: string | null }).next_cursor;
    expect(cursor).toMatch(/^[0-9A-Z]{26}\./);
    urls = { ...URLS, cursor: `${URLS.list2}&cursor=${encodeURIComponent(cursor as string)}` };
    for (const name of NAMES) await probe(t, urls[name]);
    // Warm: every entry is a hit now, and every read shows the database.
    for (const name of NAMES) expect(await isHit(t, urls[name]), `${name} is cached`).toBe(true);
    for (const name of NAMES) await expectFresh(urls[name]);
    const cursorPage = (await probe(t, urls.cursor)).body as { articles: Array<{ slug: string }> };
    expect(cursorPage.articles.map((a) => a.slug)).toEqual(["a"]);
  });

  afterEach(async () => {
    expect(t.errors).toEqual([]);
    await t.close();
  });

  it("a queued create (d, tag z) purges the list pages and tag z; the list shows d as soon as the job is applied", async () => {
    const res = await post(t, articleBody("d", { tags: ["z"] }));
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    // Poll the job, reading the (cached) list between polls, as a client waiting for its create would.
    let polls = 0;
    let status = await jobStatus(t, id);
    while (status === "queued") {
      polls++;
      await t.fetch(ARTICLES);
      await t.fetch(tagUrl("z"));
      // In-process requests and SQLite calls are all microtasks: yield, or the queue worker never runs.
      await settle(1);
      status = await jobStatus(t, id);
    }
    expect(status).toBe("applied");
    // The very next read of the list after the job reports applied: d is there, whatever was cached before.
    const list = await probe(t, ARTICLES);
    const slugs = (list.body as { articles: Array<{ slug: string }> }).articles.map((a) => a.slug);
    expect(slugs, `after ${polls} polls while queued`).toEqual(["d", "c", "b", "a"]);
    expect(list.outcome).toBe("miss");
    const tagZ = await probe(t, tagUrl("z"));
    expect((tagZ.body as { articles: Array<{ slug: string }> }).articles.map((a) => a.slug)).toEqual(["d", "b"]);
    expect(tagZ.outcome).toBe("miss");

    // The list and tag z were purged (just seen as misses) and are cached again now; the other list pages are
    // purged; pages a, b, c and tags x, y, w were not touched. (First let the worker's after-commit work run: its
    // second purge of the same tags would otherwise race the "cached again" reads.)
    await settle();
    await expectPurged(["list2", "cursor"]);
    await expectFresh(pageUrl("d"));
    expect(await isHit(t, pageUrl("d"))).toBe(true);
  });

  it("a queued create applied by a read of its page (e, tag w) purges the list pages and tag w", async () => {
    const res = await post(t, articleBody("e", { tags: ["w"] }));
    expect(res.status).toBe(202);
    // No wait: the page read applies the create if the worker has not yet (an acknowledged slug never answers 404).
    const e = await probe(t, pageUrl("e"));
    expect(e.status).toBe(200);
    await settle();
    await expectPurged([...LISTS, "tagW"]);
    expect((await probe(t, tagUrl("w"))).body).toMatchObject({ articles: [{ slug: "e" }] });
    await expectFresh(pageUrl("e"));
  });

  it("an update of a's title purges page a, the list pages and tags x, y", async () => {
    const res = await put(t, "a", { title: "A, retitled" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { title: string }).title).toBe("A, retitled");
    await expectPurged(["pageA", ...LISTS, "tagX", "tagY"]);
  });

  it("an update of a's content purges page a (and what a change of a always purges)", async () => {
    const res = await put(t, "a", { content: "<p>New body</p>" });
    expect(res.status).toBe(200);
    await expectPurged(["pageA", ...LISTS, "tagX", "tagY"]);
    expect(((await probe(t, pageUrl("a"))).body as { content: string }).content).toBe("<p>New body</p>");
  });

  it("a rename a → a2 purges page a (now 404) and the list pages and tags x, y; a2 answers at once", async () => {
    expect((await probe(t, pageUrl("a2"))).status).toBe(404);
    const res = await put(t, "a", { slug: "a2" });
    expect(res.status).toBe(200);
    await expectPurged(["pageA", ...LISTS, "tagX", "tagY"]);
    expect((await probe(t, pageUrl("a"))).status).toBe(404);
    const a2 = await probe(t, pageUrl("a2"));
    expect(a2.status).toBe(200);
    expect(await isHit(t, pageUrl("a2"))).toBe(true);

    // And back: the page of the slug it leaves (a2, cached now) is purged too, and a answers again.
    const back = await put(t, "a2", { slug: "a" });
    expect(back.status).toBe(200);
    const again = await probe(t, pageUrl("a2"));
    expect(again).toMatchObject({ status: 404, outcome: "uncached" });
    await expectPurged(["pageA", ...LISTS, "tagX", "tagY"]);
  });

  it("a retag of a from [x, y] to [y, w] purges the pages of the old and the new tags, page a and the list pages", async () => {
    const res = await put(t, "a", { tags: ["y", "w"] });
    expect(res.status).toBe(200);
    await expectPurged(["pageA", ...LISTS, "tagX", "tagY", "tagW"]);
    const w = (await probe(t, tagUrl("w"))).body as { articles: Array<{ slug: string }> };
    expect(w.articles.map((a) => a.slug)).toEqual(["a"]);
    const x = (await probe(t, tagUrl("x"))).body as { articles: Array<{ slug: string }> };
    expect(x.articles.map((a) => a.slug)).toEqual(["c"]);
  });

  it("a delete of b purges page b (then 404), the list pages and tag z", async () => {
    const res = await del(t, "b");
    expect(res.status).toBe(204);
    await expectPurged(["pageB", ...LISTS, "tagZ"]);
    expect((await probe(t, pageUrl("b"))).status).toBe(404);
  });

  it("POST /api/v1/cache/purge {slug: c} purges page c, the list pages and tag x", async () => {
    const res = await purge(t, "c");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ purged: true, slug: "c" });
    await expectPurged(["pageC", ...LISTS, "tagX"]);
  });

  it("a purge of a slug with no article purges its page only", async () => {
    const res = await purge(t, "nobody");
    expect(res.status).toBe(200);
    await expectPurged([]);
  });

  it("writes that change nothing or roll back purge nothing", async () => {
    // A rename onto an existing slug: 409, the transaction rolls back.
    const conflict = await put(t, "a", { slug: "b", title: "Never stored" });
    expect(conflict.status).toBe(409);
    await expectPurged([]);
    // An update and a delete of a slug that does not exist: 404 from inside the write.
    expect((await put(t, "nope", { title: "Nope" })).status).toBe(404);
    expect((await del(t, "nope")).status).toBe(404);
    await expectPurged([]);
    // A create of a taken slug: 409 before anything is queued.
    expect((await post(t, articleBody("c", { tags: ["w"] }))).status).toBe(409);
    await expectPurged([]);
    // An update that sets every field to its current value: nothing is written, nothing purged.
    const a = (await dbArticles(t)).find((article) => article.slug === "a");
    const same = await put(t, "a", { title: a?.title, content: a?.content, tags: a?.tags, slug: "a" });
    expect(same.status).toBe(200);
    await expectPurged([]);
    expect((await dbArticles(t)).map((article) => article.title)).toEqual(["Title of a", "Title of b", "Title of c"]);
  });
});

describe("a queued create is shown as soon as its job reports applied", () => {
  // The job route answers `applied` from the create's commit on, while a co-installed plugin's `article:afterCreate`
  // hook (set up before the cache: a webhook subscriber, say) holds back the cache's second purge for 500 ms. The
  // purge made just before the commit is what keeps the read after `applied` from serving the cached list.
  const SLOW_MS = 500;
  let slow: TestVellum;
  /** `cache:purged` events of article writes: the cache announces its after-commit purge with one. */
  let afterCommitPurges = 0;

  beforeEach(async () => {
    slow = await bootCached({ slowAfterCommitMs: SLOW_MS });
    afterCommitPurges = 0;
    slow.vellum.hooks.hook("cache:purged", ({ reason }) => {
      if (reason === "write") afterCommitPurges++;
    });
  });

  afterEach(async () => {
    expect(slow.errors).toEqual([]);
    await slow.close();
  });

  it("even while another plugin's after-create hook delays the cache's after-commit purge", async () => {
    await createApplied(slow, "a", { tags: ["x"] });
    while (afterCommitPurges < 1) await settle(20);
    for (const url of [ARTICLES, tagUrl("x")]) {
      await probe(slow, url);
      expect(await isHit(slow, url), `${url} is cached`).toBe(true);
    }
    const res = await post(slow, articleBody("d", { tags: ["x"] }));
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    expect(await waitForJob(slow, id)).toBe("applied");
    const list = await probe(slow, ARTICLES);
    const tagX = await probe(slow, tagUrl("x"));
    // These reads came before the cache's after-commit purge of d (still held back by the slow hook):
    expect(afterCommitPurges).toBe(1);
    expect((list.body as { articles: Array<{ slug: string }> }).articles.map((a) => a.slug)).toEqual(["d", "a"]);
    expect((tagX.body as { articles: Array<{ slug: string }> }).articles.map((a) => a.slug)).toEqual(["d", "a"]);
    expect([list.outcome, tagX.outcome]).toEqual(["miss", "miss"]);
    while (afterCommitPurges < 2) await settle(20);
  });
});
