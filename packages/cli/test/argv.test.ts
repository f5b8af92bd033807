import { describe, expect, it } from "vitest";
import { normalizeArgv } from "../src/argv.js";

describe("normalizeArgv", () => {
  it("turns the seed's single-dash long flags into double-dash ones", () => {
    expect(normalizeArgv(["restore", "-in", "vk-20250101-000000.vpbk", "-verify"])).toEqual([
      "restore",
      "--in",
      "vk-20250101-000000.vpbk",
      "--verify",
    ]);
    expect(normalizeArgv(["serve", "-port=4000", "-data-dir", "./d"])).toEqual([
      "serve",
      "--port=4000",
      "--data-dir",
      "./d",
    ]);
  });

  it("leaves short flags, double-dash flags, values and negative numbers alone", () => {
    const argv = ["-h", "-v", "--dest", "/x", "-1", "-", "restore", "-x=1"];
    expect(normalizeArgv(argv)).toEqual(argv);
  });

  it("stops at --", () => {
    expect(normalizeArgv(["-in", "a", "--", "-dest"])).toEqual(["--in", "a", "--", "-dest"]);
  });
});
