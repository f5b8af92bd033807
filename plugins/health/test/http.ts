import type { TestVellum } from "@vellum/core/testing";

/** GETs `path` from the instance under test and returns its status and parsed JSON body. */
export async function getJson(t: TestVellum | undefined, path: string) {
  if (!t) throw new Error("no instance");
  const res = await t.fetch(path);
  return { status: res.status, body: await res.json() };
}
