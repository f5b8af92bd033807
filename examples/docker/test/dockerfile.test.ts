import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const here = join(import.meta.dirname, "..");
const root = join(here, "..", "..");

/** The Dockerfile's instructions, one per entry (`\` continuations joined), comments left out. */
function instructions(): Array<{ op: string; args: string }> {
  const text = readFileSync(join(here, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith("#"))
    .map((line) => {
      const [op = "", ...rest] = line.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

/** The instructions of the last stage (after the last FROM). */
function finalStage() {
  const all = instructions();
  const from = all.map((i) => i.op).lastIndexOf("FROM");
  return all.slice(from);
}

describe("examples/docker (nothing is built: the files are read and checked)", () => {
  it("runs node itself in exec form, so docker stop's SIGTERM reaches the server", () => {
    const commands = finalStage().filter((i) => i.op === "CMD" || i.op === "ENTRYPOINT");
    expect(commands.map((i) => i.op)).toEqual(["CMD"]);
    const argv = JSON.parse(commands[0]?.args ?? "null") as string[];
    expect(argv).toEqual(["node", "packages/vellum/bin/vellum.mjs", "serve"]);
    expect(existsSync(join(root, argv[1] as string))).toBe(true);
  });

  it("builds with the dev dependencies, then keeps only the production ones, and runs as a user that is not root", () => {
    const all = instructions();
    expect(all.filter((i) => i.op === "FROM")).toHaveLength(2);
    const build = all.slice(0, all.map((i) => i.op).lastIndexOf("FROM"));
    const run = build.filter((i) => i.op === "RUN").map((i) => i.args);
    expect(run.some((args) => /npm ci\b.*&& npm run build && npm prune --omit=dev/.test(args))).toBe(true);
    const final = finalStage();
    const users = final.filter((i) => i.op === "USER").map((i) => i.args);
    expect(users).toEqual(["node"]);
    expect(final.find((i) => i.op === "COPY")?.args).toBe("--from=build /app /app");
  });

  it("keeps the data dir on a volume, listens on all interfaces in the container, and checks readiness", () => {
    const final = finalStage();
    const env = final
      .filter((i) => i.op === "ENV")
      .map((i) => i.args)
      .join(" ");
    expect(env).toContain("SERVICE_DATA_DIR=/data");
    expect(env).toContain("HOST=0.0.0.0");
    expect(final.find((i) => i.op === "VOLUME")?.args).toBe('["/data"]');
    expect(final.find((i) => i.op === "HEALTHCHECK")?.args).toContain("/health/ready");
  });

  it("compose builds that Dockerfile from the repository root, with data and backups on volumes", () => {
    const compose = readFileSync(join(here, "compose.yaml"), "utf8");
    expect(compose).toContain("context: ../..");
    expect(compose).toContain("dockerfile: examples/docker/Dockerfile");
    expect(compose).toMatch(/- data:\/data\b/);
    expect(compose).toMatch(/BACKUP_TARGET: \/backups\b/);
    expect(compose).toMatch(/- backups:\/backups\b/);
    expect(compose).toContain("SERVICE_BACKUP_PASSPHRASE: ${SERVICE_BACKUP_PASSPHRASE:?");
    const ignored = readFileSync(join(root, ".dockerignore"), "utf8").split("\n");
    expect(ignored).toEqual(expect.arrayContaining(["node_modules", "**/node_modules", "**/dist", "data"]));
  });
});
