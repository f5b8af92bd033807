export type { HealthOptions, QueueOptions, StorageOptions, WalUpkeepOptions } from "./options.js";
export { health } from "./plugin.js";
