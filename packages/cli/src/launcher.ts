/** How often the server looks whether its launcher is still there. */
const CHECK_MS = 500;

export interface LauncherWatch {
  /** Stops watching (the server is closing anyway). */
  stop(): void;
}

/**
 * Under `npx vellum serve` (or an npm script) the server's parent is npm's shell, and SIGTERM to
 * npm, which Docker or a process manager sends to the PID it started, ends npm and that shell but
 * never reaches the server: it would keep serving with PID 1 as its parent. When npm launched it,
 * the server watches its parent and shuts down gracefully once that is gone, as if it had the
 * signal itself. Started any other way (node directly, systemd, `nohup`), nothing is watched.
 */
export function watchLauncher(
  shutdown: (reason: string) => void,
  env: Readonly<Record<string, string | undefined>> = process.env,
): LauncherWatch | undefined {
  if (env.npm_command === undefined && env.npm_lifecycle_event === undefined) return undefined;
  const launcher = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer);
    shutdown(`its launcher (npm, pid ${launcher}) exited`);
  }, CHECK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
