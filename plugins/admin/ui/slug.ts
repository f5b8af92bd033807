/** A slug from a title (`Héllo, World!` → `hello-world`), within contract §3's `^[a-z0-9_-]{1,200}$`. */
export function slugify(title: string): string {
  return title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 200)
    .replace(/-+$/, "");
}

/** Tags as typed (`a, b ,, c`) → `["a", "b", "c"]`; the server trims, dedupes and checks them. */
export const parseTags = (text: string): string[] =>
  text
    .split(",")
    .map((tag) => tag.trim())
    .filter((tag) => tag !== "");
