import { effectiveAuth, type RouteRecord, Type } from "@vellum/core";

/** An operator action as `GET /admin/actions` lists it. */
export interface ListedAction {
  method: string;
  /** Under the mount prefix, as registered. */
  path: string;
  label: string;
  component: string | null;
  confirm: string | null;
  /** Whether the route wants the CSRF token besides the key. */
  csrf: boolean;
  summary: string | null;
}

export const ActionsBody = Type.Object({
  actions: Type.Array(
    Type.Object({
      method: Type.String(),
      path: Type.String(),
      label: Type.String(),
      component: Type.Union([Type.String(), Type.Null()]),
      confirm: Type.Union([Type.String(), Type.Null()]),
      csrf: Type.Boolean(),
      summary: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

/**
 * The routes the installed plugins offer operators as actions (`action` in their meta): keyed,
 * without path parameters, and not behind a feature flag that is off.
 */
export function listActions(routes: readonly RouteRecord[], features: ReadonlySet<string>): ListedAction[] {
  const listed: ListedAction[] = [];
  for (const { method, path, meta } of routes) {
    const { action } = meta;
    if (!action || path.includes(":") || (meta.feature && !features.has(meta.feature))) continue;
    const auth = effectiveAuth(method, meta);
    if (!auth.key) continue;
    listed.push({
      method,
      path,
      label: action.label,
      component: action.component ?? null,
      confirm: action.confirm ?? null,
      csrf: auth.csrf,
      summary: meta.schema?.summary ?? null,
    });
  }
  return listed;
}
