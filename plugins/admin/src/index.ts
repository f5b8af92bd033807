export { ADMIN_PATH, type AdminOptions, admin } from "./plugin.js";
