import { useState } from "preact/hooks";
import { ArticleList } from "./articles.js";
import { Editor } from "./editor.js";
import { useDependencies } from "./health.js";
import { HealthBanner } from "./health-banner.js";
import { hrefOf, useRoute } from "./router.js";
import { signedInKey, signOut } from "./session.js";
import { SignIn } from "./sign-in.js";
import { Status } from "./status.js";

export function App() {
  const [signedIn, setSignedIn] = useState(() => signedInKey() !== undefined);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  return (
    <Workspace
      onSignOut={() => {
        signOut();
        setSignedIn(false);
      }}
    />
  );
}

/**
 * The views of a signed-in user. `/health/dependencies` is read here once for the banner and the
 * Status view alike: every 10 s while Status is shown, every 30 s otherwise, and again on demand.
 */
function Workspace({ onSignOut }: { onSignOut: () => void }) {
  const route = useRoute();
  const [checks, setChecks] = useState(0);
  const health = useDependencies(route.view === "status" ? 10_000 : 30_000, checks);
  const recheck = () => setChecks((count) => count + 1);
  return (
    <>
      <header class="bar">
        <a class="brand" href={hrefOf({ view: "articles" })}>
          Vellum
        </a>
        <nav aria-label="Sections">
          <a href={hrefOf({ view: "articles" })} aria-current={route.view !== "status" ? "page" : undefined}>
            Articles
          </a>
          <a href={hrefOf({ view: "status" })} aria-current={route.view === "status" ? "page" : undefined}>
            Status
          </a>
        </nav>
        <button type="button" class="quiet" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <HealthBanner health={health} route={route} />
      <main>
        {route.view === "status" ? (
          <Status health={health} checks={checks} onRecheck={recheck} />
        ) : route.view === "new" ? (
          <Editor key="new" />
        ) : route.view === "edit" ? (
          <Editor key={route.slug} slug={route.slug} />
        ) : (
          <ArticleList />
        )}
      </main>
    </>
  );
}
