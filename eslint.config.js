import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "**/data/**",
      "bench/results/**",
      "coverage/**",
      "**/.nitro/**",
      "**/.output/**",
      "**/.nuxt/**",
      ".vellum-tmp/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-invalid-void-type": "error",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-console": ["error", { allow: ["error", "warn"] }],
    },
  },
  {
    files: ["plugins/*/ui/**"],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ["bench/**", "scripts/**", "**/test/fixtures/**", "examples/**/src/main.ts", "packages/*/bin/**"],
    rules: { "no-console": "off" },
  },
);
