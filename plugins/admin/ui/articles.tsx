import { useEffect, useState } from "preact/hooks";
import type { ArticleSummary, SearchResults } from "@vellum/client";
import { client, describe } from "./api.js";
import { hrefOf } from "./router.js";
import { Snippet } from "./snippet.js";

const PAGE = 20;

const when = (iso: string) => new Date(iso).toLocaleString();

/** The articles, newest first, a page at a time; filtered by a tag, or found by a search. */
export function ArticleList() {
  const [tag, setTag] = useState<string>();
  const [query, setQuery] = useState("");
  const [articles, setArticles] = useState<ArticleSummary[]>([]);
  const [hits, setHits] = useState<SearchResults>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string>();

  const load = async (after: string | null) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await client().articles.page({ limit: PAGE, ...(tag && { tag }), ...(after && { cursor: after }) });
      setArticles((shown) => (after ? [...shown, ...page.articles] : page.articles));
      setCursor(page.next_cursor);
    } catch (failure) {
      setError(describe(failure));
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    void load(null);
  }, [tag]);

  useEffect(() => {
    const q = query.trim();
    if (q === "") {
      setHits(undefined);
      return;
    }
    const timer = setTimeout(async () => {
      try {
        setHits(await client().search({ q: q.slice(0, 256), limit: PAGE }));
        setError(undefined);
      } catch (failure) {
        setError(describe(failure));
      }
    }, 250);
    return () => clearTimeout(timer);
  }, [query]);

  /** The next page of the same search, after the hits shown. */
  const moreHits = async () => {
    if (!hits) return;
    setLoading(true);
    try {
      const next = await client().search({ q: query.trim().slice(0, 256), limit: PAGE, offset: hits.results.length });
      setHits({ ...next, results: [...hits.results, ...next.results] });
    } catch (failure) {
      setError(describe(failure));
    } finally {
      setLoading(false);
    }
  };

  const tags = (list: string[]) =>
    list.map((name) => (
      <button type="button" class="tag" key={name} onClick={() => setTag(name)} title={`Only articles tagged ${name}`}>
        {name}
      </button>
    ));

  return (
    <section>
      <div class="heading">
        <h1>Articles</h1>
        <a class="button" href={hrefOf({ view: "new" })}>
          New article
        </a>
      </div>
      <div class="filters">
        <input
          type="search"
          aria-label="Search articles"
          placeholder="Search"
          maxLength={256}
          value={query}
          onInput={(event) => setQuery(event.currentTarget.value)}
        />
        {tag && (
          <span class="filter">
            Tagged <strong>{tag}</strong>
            <button type="button" class="quiet" onClick={() => setTag(undefined)}>
              Clear
            </button>
          </span>
        )}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {hits ? (
        <>
          <p class="hint" aria-live="polite">
            {hits.degraded
              ? "Search is unavailable right now (its index is being rebuilt or is missing)."
              : `${hits.total} found`}
          </p>
          <ul class="rows">
            {hits.results.map((hit) => (
              <li key={hit.id}>
                <a href={hrefOf({ view: "edit", slug: hit.slug })}>{hit.title}</a>
                <p class="snippet">
                  <Snippet text={hit.snippet} />
                </p>
                <div class="meta">{tags(hit.tags)}</div>
              </li>
            ))}
          </ul>
          {hits.results.length < hits.total && (
            <button type="button" disabled={loading} onClick={() => void moreHits()}>
              {loading ? "Loading…" : "More"}
            </button>
          )}
        </>
      ) : (
        <>
          <ul class="rows">
            {articles.map((article) => (
              <li key={article.id}>
                <a href={hrefOf({ view: "edit", slug: article.slug })}>{article.title}</a>
                <div class="meta">
                  <code>{article.slug}</code>
                  <time dateTime={article.updated_at}>updated {when(article.updated_at)}</time>
                  {tags(article.tags)}
                </div>
              </li>
            ))}
          </ul>
          {!loading && articles.length === 0 && !error && <p class="hint">No articles yet.</p>}
          {cursor && (
            <button type="button" disabled={loading} onClick={() => void load(cursor)}>
              {loading ? "Loading…" : "More"}
            </button>
          )}
        </>
      )}
    </section>
  );
}
