export type Query = Record<string, string | number | undefined>;

/**
 * Checks a base URL once: absolute http(s), no query or fragment. Its path is a mount prefix (`http://host/cms`)
 * under which every API path is joined; a trailing slash does not matter.
 */
export function parseBaseUrl(baseUrl: string | URL): URL {
  const url = new URL(baseUrl);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`baseUrl must be an http or https URL, not ${url.protocol}`);
  }
  if (url.search || url.hash) throw new TypeError("baseUrl must have no query or fragment");
  return url;
}

/** `base` + `path` (which starts with `/`), with the defined query parameters. */
export function joinUrl(base: URL, path: string, query: Query = {}): URL {
  const url = new URL(base);
  url.pathname = base.pathname.replace(/\/+$/, "") + path;
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  return url;
}

/**
 * One path segment (a slug, a job id), percent-encoded so it cannot leave its segment. Empty and dot segments are
 * refused: URL parsing would resolve `..` (even as `%2e%2e`) into another route.
 */
export function segment(value: string): string {
  if (value === "" || value === "." || value === "..") throw new TypeError(`not a path segment: "${value}"`);
  return encodeURIComponent(value);
}
