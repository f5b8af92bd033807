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
    reporters: ["default"],
  },
});
