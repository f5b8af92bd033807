// Child process: the 1,000 queries through the engine in-process (no HTTP), after a warm-up with
// other queries. Usage: node inprocess.mjs --data-dir <dir> --articles <n>
import { argsOf, benchInstance } from "./instance.mjs";
import { makeQueries } from "./queries.mjs";
import { recoveryJudge } from "./recovery.mjs";
import { byKind, emit, peakRss } from "./stats.mjs";

const { dataDir, articles: count } = argsOf(process.argv);
const { vellum } = benchInstance(dataDir);
await vellum.ready();
const engine = vellum.service("search").engine;
const queries = makeQueries(count);

for (const q of makeQueries(count, 300, 0xbadc0de)) await engine.query({ q: q.q, limit: 20, offset: 0 });

const ms = [];
const plans = {};
const recovered = { exact: 0, stem: 0 };
const typoTops = [];
let empty = 0;
for (const q of queries) {
  const t = performance.now();
  const result = await engine.query({ q: q.q, limit: 20, offset: 0 });
  ms.push(performance.now() - t);
  plans[result.plan] = (plans[result.plan] ?? 0) + 1;
  if (result.hits.length === 0) empty++;
  if (q.kind === "typo") typoTops.push([result.hits[0]?.slug, q.intended]);
}
await vellum.close();
const judge = recoveryJudge(dataDir);
for (const [slug, word] of typoTops) {
  if (!slug) continue;
  const verdict = judge.judge(slug, word);
  if (verdict.exact) recovered.exact++;
  if (verdict.stem || verdict.exact) recovered.stem++;
}
judge.close();
const typos = typoTops.length;
emit({
  latency: byKind(queries, ms),
  plans,
  empty,
  typoRecovery: { exact: recovered.exact / typos, stem: recovered.stem / typos },
  typos,
  peakRssBytes: await peakRss(),
});
