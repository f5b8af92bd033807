import { useEffect, useState } from "preact/hooks";

/** The views, addressed by the location's hash so the server serves one page for all of them. */
export type Route = { view: "articles" } | { view: "new" } | { view: "edit"; slug: string } | { view: "status" };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "");
  if (path === "/status") return { view: "status" };
  if (path === "/articles/new") return { view: "new" };
  const edit = /^\/articles\/([^/]+)$/.exec(path);
  if (edit?.[1]) return { view: "edit", slug: decodeURIComponent(edit[1]) };
  return { view: "articles" };
}

export const hrefOf = (route: Route): string =>
  route.view === "status"
    ? "#/status"
    : route.view === "new"
      ? "#/articles/new"
      : route.view === "edit"
        ? `#/articles/${encodeURIComponent(route.slug)}`
        : "#/";

export function navigate(route: Route): void {
  location.hash = hrefOf(route);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}
