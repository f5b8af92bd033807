import { describe, expect, it } from "vitest";
import { type CacheEntry, type EvictionReason, MemoryCacheStore, type MemoryStoreOptions } from "../src/index.js";

let serial = 0;

/** An entry of `bytes` bytes carrying `tags` (a distinct object each time, as every miss builds one). */
function entry(tags: string[], bytes = 100): CacheEntry {
  const etag = `"e${++serial}"`;
  return {
    etag,
    tags,
    bytes,
    ok: { status: 200, headers: ["etag", etag], body: new Uint8Array(1), route: "/r" },
    notModified: { status: 304, headers: ["etag", etag], route: "/r" },
  };
}

function store(options: Partial<MemoryStoreOptions> = {}) {
  const evictions: EvictionReason[] = [];
  const s = new MemoryCacheStore({
    maxEntries: 100,
    maxBytes: 100_000,
    maxEntryBytes: 10_000,
    onEvict: (reason) => evictions.push(reason),
    ...options,
  });
  return { s, evictions };
}

// The tag index is what makes a purge exact: it must name every held entry under each of its tags and nothing
// else. A key left under a tag after its entry was replaced, evicted or purged would make a later purge of that tag
// drop an unrelated response (or count one it did not remove); a missing key would leave a stale response served.
describe("MemoryCacheStore: the tag index follows the entries", () => {
  it("a purge removes exactly the entries carrying one of the tags, and counts each once", () => {
    const { s } = store();
    s.set("/a", entry(["article:a", "articles"]));
    s.set("/b", entry(["article:b", "articles"]));
    s.set("/c", entry(["article:c", "tag:x"]));
    s.set("/d", entry(["tag:x", "tag:y"]));
    expect(s.purge(["articles", "article:a"])).toBe(2);
    expect(s.get("/a")).toBeUndefined();
    expect(s.get("/b")).toBeUndefined();
    expect(s.get("/c")).toBeDefined();
    expect(s.get("/d")).toBeDefined();
    expect(s.purge(["articles"])).toBe(0);
    expect(s.purge(["no-such-tag"])).toBe(0);
    expect(s.purge(["tag:x"])).toBe(2);
    expect(s.entries).toBe(0);
    expect(s.bytes).toBe(0);
  });

  it("a replaced entry leaves its old tags: purging them keeps the new one", () => {
    const { s, evictions } = store();
    s.set("/k", entry(["tag:old", "shared"]));
    const next = entry(["tag:new", "shared"]);
    s.set("/k", next);
    expect(s.entries).toBe(1);
    expect(s.purge(["tag:old"])).toBe(0);
    expect(s.get("/k")).toBe(next);
    expect(s.purge(["shared"])).toBe(1);
    expect(s.get("/k")).toBeUndefined();
    expect(evictions).toEqual([]);
  });

  it("an evicted entry leaves the index: a later entry under its key is not purged by the old tags", () => {
    const { s, evictions } = store({ maxEntries: 2 });
    s.set("/k1", entry(["tag:a"]));
    s.set("/k2", entry(["tag:a"]));
    s.set("/k3", entry(["tag:b"])); // evicts /k1, the least recently used
    expect(evictions).toEqual(["entries"]);
    expect(s.get("/k1")).toBeUndefined();
    const back = entry(["tag:b"]);
    s.set("/k1", back); // evicts /k2
    expect(evictions).toEqual(["entries", "entries"]);
    expect(s.purge(["tag:a"])).toBe(0);
    expect(s.get("/k1")).toBe(back);
    expect(s.purge(["tag:b"])).toBe(2);
    expect(s.entries).toBe(0);
  });

  it("evicts the least recently read entry, and by bytes when the byte bound is the one reached", () => {
    const { s, evictions } = store({ maxEntries: 10, maxBytes: 300, maxEntryBytes: 300 });
    s.set("/1", entry(["t1"], 100));
    s.set("/2", entry(["t2"], 100));
    s.set("/3", entry(["t3"], 100));
    expect(s.get("/1")).toBeDefined(); // /2 is now the least recently used
    s.set("/4", entry(["t4"], 100));
    expect(evictions).toEqual(["bytes"]);
    expect(s.get("/2")).toBeUndefined();
    expect(s.bytes).toBe(300);
    expect(s.entries).toBe(3);
    expect(s.purge(["t2"])).toBe(0);
    expect(s.purge(["t1", "t3", "t4"])).toBe(3);
  });

  it("clear() empties the index too", () => {
    const { s } = store();
    s.set("/a", entry(["tag:a"]));
    s.clear();
    expect(s.entries).toBe(0);
    const again = entry(["tag:b"]);
    s.set("/a", again);
    expect(s.purge(["tag:a"])).toBe(0);
    expect(s.get("/a")).toBe(again);
  });

  it("keeps entries, bytes and the index consistent through a long random sequence (model check)", () => {
    // A seeded sequence of sets, replacements, reads and purges under tight bounds. The model holds the last
    // entry set under each key; the store holds either that entry or nothing (never an older one), and a purge
    // removes exactly the held entries that carry one of its tags.
    let seed = 42;
    const random = (n: number) => {
      // mulberry32
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), seed | 1);
      x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
      return (((x ^ (x >>> 14)) >>> 0) / 4294967296) * n;
    };
    const maxEntries = 20;
    const maxBytes = 4_000;
    const { s, evictions } = store({ maxEntries, maxBytes, maxEntryBytes: 400 });
    const last = new Map<string, CacheEntry>();
    const tagPool = ["articles", "tag:a", "tag:b", "tag:c", "article:x", "article:y"];
    let purgedTotal = 0;
    let refused = 0;

    const held = () => {
      const present: Array<[string, CacheEntry]> = [];
      for (const [key, wanted] of last) {
        const got = s.get(key);
        if (got !== undefined) {
          expect(got).toBe(wanted);
          present.push([key, got]);
        }
      }
      return present;
    };

    for (let step = 0; step < 5_000; step++) {
      const op = Math.floor(random(20));
      const key = `/k${Math.floor(random(60))}`;
      const pick = () => tagPool[Math.floor(random(tagPool.length))] as string;
      if (op < 14) {
        const tags = [...new Set([pick(), pick()])];
        const e = entry(tags, 10 + Math.floor(random(420))); // a few are over maxEntryBytes
        const kept = s.set(key, e);
        expect(kept).toBe(e.bytes <= 400);
        if (kept) last.set(key, e);
        else {
          refused++;
          last.delete(key);
          expect(s.get(key)).toBeUndefined();
        }
      } else if (op < 19) {
        s.get(key);
      } else {
        const tags = [pick()];
        const expected = held().filter(([, e]) => e.tags.some((t) => tags.includes(t)));
        const removed = s.purge(tags);
        expect(removed).toBe(expected.length);
        purgedTotal += removed;
        for (const [key] of expected) expect(s.get(key)).toBeUndefined();
      }
      if (step % 97 === 0 || step === 4_999) {
        const present = held();
        expect(s.entries).toBe(present.length);
        expect(s.bytes).toBe(present.reduce((sum, [, e]) => sum + e.bytes, 0));
        expect(s.entries).toBeLessThanOrEqual(maxEntries);
        expect(s.bytes).toBeLessThanOrEqual(maxBytes);
      }
    }
    expect(evictions.length).toBeGreaterThan(100);
    expect(new Set(evictions)).toEqual(new Set(["entries", "bytes"]));
    expect(refused).toBeGreaterThan(0);
    expect(purgedTotal).toBeGreaterThan(0);

    // Every tag still indexed names only held entries: purging all tags removes exactly what is held.
    const present = held();
    expect(s.purge(tagPool)).toBe(present.length);
    expect(s.entries).toBe(0);
    expect(s.bytes).toBe(0);
  });
});

// One response larger than maxEntryBytes is served but not held, so a few big pages cannot push out everything
// else; the store says so (set returns false) and drops an older copy under that key instead of serving it.
describe("MemoryCacheStore: maxEntryBytes", () => {
  it("refuses an entry over the per-entry bound, without evicting anything", () => {
    const { s, evictions } = store({ maxEntries: 10, maxBytes: 10_000, maxEntryBytes: 1_000 });
    s.set("/small", entry(["t"], 1_000));
    expect(s.set("/big", entry(["t"], 1_001))).toBe(false);
    expect(s.get("/big")).toBeUndefined();
    expect(s.get("/small")).toBeDefined();
    expect(s.entries).toBe(1);
    expect(s.bytes).toBe(1_000);
    expect(evictions).toEqual([]);
  });

  it("a key whose response grew too large no longer serves its old entry, nor keeps it indexed", () => {
    const { s } = store({ maxEntryBytes: 1_000 });
    s.set("/k", entry(["tag:a"], 500));
    expect(s.set("/k", entry(["tag:a"], 5_000))).toBe(false);
    expect(s.get("/k")).toBeUndefined();
    expect(s.entries).toBe(0);
    const fresh = entry(["tag:b"], 500);
    s.set("/k", fresh);
    expect(s.purge(["tag:a"])).toBe(0);
    expect(s.get("/k")).toBe(fresh);
  });
});
