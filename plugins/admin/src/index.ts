export { ADMIN_PATH, admin } from "./plugin.js";
