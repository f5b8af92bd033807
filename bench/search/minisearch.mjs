// Child process: MiniSearch on the same corpus and the same queries, for comparison.
// Usage: node minisearch.mjs --articles <n>
import MiniSearch from "minisearch";
import { article } from "./corpus.mjs";
import { argsOf } from "./instance.mjs";
import { makeQueries, slugOf } from "./queries.mjs";
import { recoveryJudge } from "./recovery.mjs";
import { byKind, emit, peakRss } from "./stats.mjs";

const { articles: count, dataDir } = argsOf(process.argv);
const mini = new MiniSearch({
  fields: ["title", "tags", "body"],
  storeFields: ["slug"],
  searchOptions: {
    boost: { title: 10, tags: 4 },
    combineWith: "AND",
    fuzzy: 0.2,
    prefix: (_term, i, terms) => i === terms.length - 1,
  },
});

let started = performance.now();
for (let n = 0; n < count; n++) {
  const a = article(n);
  mini.add({ id: n, title: a.title, tags: a.tags.join(" "), body: a.content.replace(/<[^>]+>/g, " ") });
}
const buildMs = performance.now() - started;

const queries = makeQueries(count);
for (const q of makeQueries(count, 300, 0xbadc0de)) mini.search(q.q).slice(0, 20);
const ms = [];
const typoTops = [];
for (const q of queries) {
  started = performance.now();
  const hits = mini.search(q.q).slice(0, 20);
  ms.push(performance.now() - started);
  if (q.kind === "typo") typoTops.push([hits[0] === undefined ? undefined : slugOf(hits[0].id), q.intended]);
}
const judge = recoveryJudge(dataDir);
const recovered = { exact: 0, stem: 0 };
for (const [slug, word] of typoTops) {
  if (!slug) continue;
  const verdict = judge.judge(slug, word);
  if (verdict.exact) recovered.exact++;
  if (verdict.stem || verdict.exact) recovered.stem++;
}
judge.close();
emit({
  buildMs,
  latency: byKind(queries, ms),
  typoRecovery: { exact: recovered.exact / typoTops.length, stem: recovered.stem / typoTops.length },
  peakRssBytes: await peakRss(),
});
