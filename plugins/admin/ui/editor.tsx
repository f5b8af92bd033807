import { useEffect, useState } from "preact/hooks";
import { type Article, VellumApiError } from "@vellum/client";
import { client, describe } from "./api.js";
import { RichText } from "./rich-text.js";
import { guardLeaving, navigate } from "./router.js";
import { parseTags, slugify } from "./slug.js";

interface Draft {
  title: string;
  slug: string;
  tags: string;
  content: string;
}

const EMPTY: Draft = { title: "", slug: "", tags: "", content: "" };

const draftOf = (article: Article): Draft => ({
  title: article.title,
  slug: article.slug,
  tags: article.tags.join(", "),
  content: article.content,
});

const sameDraft = (a: Draft, b: Draft) =>
  a.title === b.title && a.slug === b.slug && a.tags === b.tags && a.content === b.content;

/** What to tell the user on the next editor shown: a save that moved to another address (a create, a rename). */
let flash: string | undefined;

const savedAt = (iso: string) => `Saved at ${new Date(iso).toLocaleTimeString()}.`;

/** A new article (`slug` undefined) or an existing one: its fields, saved through the public API. */
export function Editor({ slug }: { slug?: string }) {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  /** What the server holds (empty for a new article): the draft differs from it while unsaved. */
  const [saved, setSaved] = useState<Draft>(EMPTY);
  const [slugEdited, setSlugEdited] = useState(slug !== undefined);
  const [loaded, setLoaded] = useState(slug === undefined);
  const [busy, setBusy] = useState<string>();
  const [problem, setProblem] = useState<VellumApiError>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string | undefined>(() => {
    const told = flash;
    flash = undefined;
    return told;
  });

  useEffect(() => {
    if (slug === undefined) return;
    client()
      .articles.get(slug)
      .then((article: Article) => {
        setDraft(draftOf(article));
        setSaved(draftOf(article));
        setLoaded(true);
      })
      .catch((failure: unknown) => setError(describe(failure)));
  }, [slug]);

  const unsaved = loaded && !sameDraft(draft, saved);
  useEffect(() => {
    if (!unsaved) return;
    const unload = (event: BeforeUnloadEvent) => event.preventDefault();
    addEventListener("beforeunload", unload);
    const release = guardLeaving(() => confirm("Leave without saving? Your changes to this article will be lost."));
    return () => {
      removeEventListener("beforeunload", unload);
      release();
    };
  }, [unsaved]);

  const set = (field: keyof Draft, value: string) =>
    setDraft((current) => {
      const next = { ...current, [field]: value };
      if (field === "title" && !slugEdited) next.slug = slugify(value);
      return next;
    });

  const run = async (what: string, work: () => Promise<void>) => {
    setBusy(what);
    setProblem(undefined);
    setError(undefined);
    setNotice(undefined);
    try {
      await work();
    } catch (failure) {
      if (failure instanceof VellumApiError) setProblem(failure);
      setError(describe(failure));
    } finally {
      setBusy(undefined);
    }
  };

  const body = () => ({ title: draft.title, slug: draft.slug, content: draft.content, tags: parseTags(draft.tags) });

  const save = (event: Event) => {
    event.preventDefault();
    void run("Saving…", async () => {
      if (slug === undefined) {
        const queued = client().articles.create(body());
        await queued;
        setNotice("Queued; publishing…");
        await queued.applied();
        flash = "Published.";
        navigate({ view: "edit", slug: draft.slug });
        return;
      }
      const article = await client().articles.update(slug, body());
      setDraft(draftOf(article));
      setSaved(draftOf(article));
      if (article.slug === slug) return setNotice(savedAt(article.updated_at));
      flash = `${savedAt(article.updated_at)} Its address is now ${article.slug}.`;
      navigate({ view: "edit", slug: article.slug });
    });
  };

  const remove = () => {
    if (slug === undefined || !confirm(`Delete “${draft.title}”? This cannot be undone.`)) return;
    void run("Deleting…", async () => {
      await client().articles.delete(slug);
      navigate({ view: "articles" });
    });
  };

  const fieldError = (field: string) =>
    problem?.details?.find((detail) => detail.field === field || detail.field.startsWith(`${field}[`))?.message;
  const invalid = (field: string) => {
    const message =
      fieldError(field) ?? (field === "slug" && problem?.code === "invalid_slug" ? problem.message : undefined);
    return message ? (
      <span class="field-error" id={`${field}-error`}>
        {message}
      </span>
    ) : null;
  };

  if (!loaded)
    return error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : (
      <p class="hint">Loading…</p>
    );

  return (
    <form class="editor" onSubmit={save}>
      <div class="heading">
        <h1>{slug === undefined ? "New article" : "Edit article"}</h1>
        <div class="actions">
          {slug !== undefined && (
            <button type="button" class="danger" disabled={busy !== undefined} onClick={remove}>
              Delete
            </button>
          )}
          <button type="submit" disabled={busy !== undefined}>
            {busy ?? (slug === undefined ? "Publish" : "Save")}
          </button>
        </div>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <label for="title">Title</label>
      <input
        id="title"
        required
        maxLength={300}
        value={draft.title}
        aria-invalid={fieldError("title") ? true : undefined}
        onInput={(event) => set("title", event.currentTarget.value)}
      />
      {invalid("title")}
      <label for="slug">Slug</label>
      <input
        id="slug"
        required
        maxLength={200}
        pattern="[a-z0-9_\-]{1,200}"
        value={draft.slug}
        aria-invalid={invalid("slug") ? true : undefined}
        onInput={(event) => {
          setSlugEdited(true);
          set("slug", event.currentTarget.value);
        }}
      />
      {invalid("slug")}
      <label for="tags">Tags</label>
      <input
        id="tags"
        placeholder="comma, separated"
        value={draft.tags}
        onInput={(event) => set("tags", event.currentTarget.value)}
      />
      {invalid("tags")}
      <span class="label" id="content-label">
        Content
      </span>
      <RichText
        labelledBy="content-label"
        value={draft.content}
        onChange={(html) => set("content", html)}
        onUpload={(file) => client().media.upload(file)}
      />
      {invalid("content")}
    </form>
  );
}
