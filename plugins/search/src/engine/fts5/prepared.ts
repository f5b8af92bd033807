import { type CompiledQuery, PreparedQuery } from "@vellum/core";

/** Statements compiled once per generation (their SQL differs only by its tables), by name and generation. */
const compiled = new Map<string, PreparedQuery<unknown>>();
/** Rebuilds add generations; the statements of old ones go once this many are kept. */
const MAX_COMPILED = 64;

/** Statement `name` of `generation`, compiled by `build` at its first use; it runs on every indexed write. */
export function prepared<R>(
  name: string,
  generation: number,
  arity: number,
  build: () => CompiledQuery,
): PreparedQuery<R> {
  const key = `${name}:${generation}`;
  let query = compiled.get(key);
  if (!query) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    query = new PreparedQuery(build(), arity);
    compiled.set(key, query);
  }
  return query as PreparedQuery<R>;
}
