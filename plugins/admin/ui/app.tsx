import { useState } from "preact/hooks";
import { ArticleList } from "./articles.js";
import { Editor } from "./editor.js";
import { HealthBanner } from "./health-banner.js";
import { hrefOf, useRoute } from "./router.js";
import { signedInKey, signOut } from "./session.js";
import { SignIn } from "./sign-in.js";
import { Status } from "./status.js";

export function App() {
  const [signedIn, setSignedIn] = useState(() => signedInKey() !== undefined);
  const route = useRoute();
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
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
        <button
          type="button"
          class="quiet"
          onClick={() => {
            signOut();
            setSignedIn(false);
          }}
        >
          Sign out
        </button>
      </header>
      <HealthBanner route={route} />
      <main>
        {route.view === "status" ? (
          <Status />
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
