import { createVellum } from "@vellum/core";
import { search } from "@vellum/plugin-search";
import { fixtureArticles } from "./articles-fixture.mjs";

export const BENCH_API_KEY = "bench-api-key-0123456789abcdef";

/**
 * A Vellum instance with the search plugin and the bench's articles stand-in on `dataDir`.
 * The search rate limit (10/s per IP) is off: the load comes from one address.
 * @param {string} dataDir
 */
export function benchInstance(dataDir) {
  const articles = fixtureArticles();
  const vellum = createVellum({
    dataDir,
    plugins: [articles.plugin, search({ rateLimit: false, autoRepair: false })],
    logLevel: 2,
    security: { apiKey: BENCH_API_KEY },
  });
  return { vellum, articles };
}

/** @param {string[]} argv */
export function argsOf(argv) {
  const get = (name, fallback) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : fallback;
  };
  return { dataDir: get("data-dir"), articles: Number(get("articles", "100000")), port: Number(get("port", "0")) };
}
