// Chromium for the browser tests: Debian's build at /usr/bin/chromium driven by playwright-core, never a
// downloaded browser. Without it a browser test is skipped and says so, unless VELLUM_REQUIRE_BROWSER=1
// (set by .ci/run, which installs it) makes its absence a failure.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Whether the browser tests of `what` are skipped here; a skip is printed once, with how to run them. */
export function skipWithoutChromium(what: string): boolean {
  const skip = !existsSync(CHROMIUM) && process.env.VELLUM_REQUIRE_BROWSER !== "1";
  if (skip)
    console.warn(
      `[${what}] skipping the browser tests: ${CHROMIUM} is not installed (apt-get install -y chromium); ` +
        "set VELLUM_REQUIRE_BROWSER=1 to make its absence a failure",
    );
  return skip;
}

/** Launches Chromium headless with the project's flags; fails with a clear message when it is required and missing. */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`VELLUM_REQUIRE_BROWSER=1 but ${CHROMIUM} is not installed`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}
