import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { acquireFileLock } from "../src/index.js";

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("acquireFileLock", () => {
  it("lets one holder in at a time: the next waits, told once, until the first releases", async () => {
    dir = await mkdtemp(join(tmpdir(), "vellum-file-lock-"));
    const path = join(dir, "prepare.lock");
    const first = await acquireFileLock(path);
    expect(existsSync(path)).toBe(true);
    let waits = 0;
    let second: Awaited<ReturnType<typeof acquireFileLock>> | undefined;
    const pending = acquireFileLock(path, { retryMs: 10, onWait: () => waits++ }).then((lock) => (second = lock));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(second).toBeUndefined();
    expect(waits).toBe(1);
    first.release();
    await pending;
    expect(second).toBeDefined();
    second?.release();
    expect(existsSync(path)).toBe(false);
    // Free again: taken at once, without waiting.
    const third = await acquireFileLock(path, { onWait: () => waits++ });
    third.release();
    expect(waits).toBe(1);
  });

  it("never has two holders: a waiter on a removed file waits for one who locked the path's new file", async () => {
    dir = await mkdtemp(join(tmpdir(), "vellum-file-lock-"));
    const path = join(dir, "prepare.lock");
    const first = await acquireFileLock(path);
    let second: Awaited<ReturnType<typeof acquireFileLock>> | undefined;
    const pending = acquireFileLock(path, { retryMs: 200 }).then((lock) => (second = lock));
    await new Promise((resolve) => setTimeout(resolve, 50)); // the second waits on the first's file
    first.release(); // removes that file, then lets it go
    const third = await acquireFileLock(path); // a newcomer: a new file at the path, locked at once
    await new Promise((resolve) => setTimeout(resolve, 500)); // the second tried again meanwhile
    expect(second).toBeUndefined();
    third.release();
    await pending;
    expect(second).toBeDefined();
    second?.release();
  });
});
