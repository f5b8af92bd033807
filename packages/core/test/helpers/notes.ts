import type { TestVellum } from "../../src/testing/index.js";

/** POSTs a note to the notes fixture plugin (a write through `ctx.write`). */
export async function postNote(t: TestVellum, id: string, body = "text"): Promise<Response> {
  return t.fetch("/api/v1/notes", { method: "POST", json: { id, body }, headers: await t.writeHeaders() });
}

/** How many notes are stored. */
export async function noteCount(t: TestVellum): Promise<number> {
  const res = await t.fetch("/api/v1/notes-count");
  return ((await res.json()) as { count: number }).count;
}

/** The `service_hook_failures_total` sample of `plugin` and `hook`, or undefined when there is none. */
export async function hookFailures(t: TestVellum, plugin: string, hook: string): Promise<number | undefined> {
  const text = await t.vellum.metrics.registry.metrics();
  const line = text
    .split("\n")
    .find((row) => row.startsWith(`service_hook_failures_total{plugin="${plugin}",hook="${hook}"} `));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}
