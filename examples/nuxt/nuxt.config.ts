// The Nuxt app: Vellum is added as a module and answers under /cms; everything else is Nuxt's.
export default defineNuxtConfig({
  compatibilityDate: "2026-01-01",
  devtools: { enabled: false },
  modules: [["./src/module", { prefix: "/cms" }]],
});
