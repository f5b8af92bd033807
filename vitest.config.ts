import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["vellum-source"] },
  ssr: { resolve: { conditions: ["vellum-source"] } },
  test: {
    include: [
      "packages/*/test/**/*.test.ts",
      "plugins/*/test/**/*.test.ts",
      "examples/*/test/**/*.test.ts",
      "playground/test/**/*.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Vitest's default leaves one core free, which runs a 2-core machine's suite one file at a time;
    // most files wait on child processes, servers and the disk, so every core runs a file.
    maxWorkers: availableParallelism(),
    reporters: ["default"],
  },
});
