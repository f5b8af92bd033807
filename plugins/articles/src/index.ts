export type { ArticlesOptions } from "./options.js";
export { articles, articles as default } from "./plugin.js";
