import { describe, expect, it } from "vitest";
import { thenNow } from "../src/then-now.js";

describe("thenNow", () => {
  it("applies a function at once to a value and after a promise settles", async () => {
    expect(thenNow(2, (n) => n * 3)).toBe(6);
    const later = thenNow(Promise.resolve(2), (n) => n * 3);
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe(6);
    await expect(thenNow(Promise.reject(new Error("no")), () => 1)).rejects.toThrow("no");
  });
});
