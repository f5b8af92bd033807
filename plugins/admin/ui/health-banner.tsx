import { type Dependencies, needsAttention, sayOf } from "./health.js";
import { hrefOf, type Route } from "./router.js";

/**
 * A line on every view while a component of the service needs attention ("backup: Restore
 * FAILED"), so an editor sees it without opening the status view.
 */
export function HealthBanner({ health, route }: { health: Dependencies | undefined; route: Route }) {
  if (!health) return null;
  const troubled = Object.entries(health.dependencies).filter(([, dependency]) => needsAttention(dependency));
  if (troubled.length === 0) return null;
  return (
    <p class="banner" role="alert">
      {troubled.map(([name, dependency]) => `${name}: ${sayOf(dependency)}`).join(" · ")}
      {route.view !== "status" && (
        <>
          {" "}
          <a href={hrefOf({ view: "status" })}>Details</a>
        </>
      )}
    </p>
  );
}
