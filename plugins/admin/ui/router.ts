import { useEffect, useRef, useState } from "preact/hooks";

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

/** Asked before the user leaves the view (a link, the back button): true lets them go. */
let leaving: (() => boolean) | undefined;
/** The next hash change is the app's own (after a save or a delete): no question asked. */
let ownMove = false;

/** Asks `check` before the user leaves the current view, until the returned function is called. */
export function guardLeaving(check: () => boolean): () => void {
  leaving = check;
  return () => {
    if (leaving === check) leaving = undefined;
  };
}

/** Moves to `route` as the app's own step, past any guard. */
export function navigate(route: Route): void {
  const href = hrefOf(route);
  if (location.hash === href) return;
  ownMove = true;
  location.hash = href;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  const shown = useRef(location.hash);
  useEffect(() => {
    const changed = () => {
      const own = ownMove;
      ownMove = false;
      if (!own && leaving && !leaving()) {
        // Stay: put the address back without another hash change.
        history.replaceState(null, "", shown.current || hrefOf({ view: "articles" }));
        return;
      }
      shown.current = location.hash;
      setRoute(parseRoute(location.hash));
    };
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}
