import { ApiError, pathParam } from "@vellum/core";
import type { ComponentResult } from "../checks/components.js";
import type { Inspector } from "../inspector.js";
import { json } from "../respond.js";
import { componentSchema } from "./schemas.js";

/** `{status, state, ...detail}`: `status` is `ok` or `degraded`, `state` the reported state. */
function componentBody(result: ComponentResult) {
  const detail = Object.fromEntries(
    Object.entries(result.detail).filter(([key]) => key !== "status" && key !== "state"),
  );
  return { status: result.state === "ok" ? "ok" : "degraded", state: result.state, ...detail };
}

/**
 * `GET /health/<name>` for every registered component: 200, or 503 while it is unavailable. A
 * name the operator expects but no plugin registers answers `absent`; any other name is 404. The
 * plugin's own `/health/...` routes are static and take precedence.
 */
export function registerComponentRoute(inspector: Inspector): void {
  inspector.ctx.router.get(
    "/health/:component",
    async (event) => {
      const name = pathParam(event, "component");
      const result = await inspector.component(name);
      if (result) return json(componentBody(result), result.state === "unavailable" ? 503 : 200);
      if (inspector.options.expect.includes(name)) return json({ status: "absent", state: "absent" });
      throw new ApiError("not_found", "No health component has this name.");
    },
    { auth: "none", schema: componentSchema },
  );
}
