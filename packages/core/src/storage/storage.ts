import { join } from "node:path";
import { createStorage, type Driver, prefixStorage, type Storage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import memoryDriver from "unstorage/drivers/memory";

/**
 * The instance's storage: a memory root, and one mount per plugin namespace, made on the
 * plugin's first use. A namespace is durable by default (`<dataDir>/storage/<plugin>/`), and the
 * host may replace any by config (`storage: { <plugin>: s3Driver(...) }`).
 */
export class VellumStorage {
  readonly root: Storage = createStorage({ driver: memoryDriver() });
  readonly #dataDir: string;
  readonly #overrides: Record<string, Driver>;
  readonly #mounted = new Set<string>();

  constructor(dataDir: string, overrides: Record<string, Driver> = {}) {
    this.#dataDir = dataDir;
    this.#overrides = overrides;
  }

  /** The namespace of `plugin` (`prefixStorage`), mounted now if it is not yet. */
  namespace(plugin: string): Storage {
    if (!this.#mounted.has(plugin)) {
      this.#mounted.add(plugin);
      this.root.mount(plugin, this.#overrides[plugin] ?? fsDriver({ base: join(this.#dataDir, "storage", plugin) }));
    }
    return prefixStorage(this.root, plugin);
  }

  dispose(): Promise<void> {
    return this.root.dispose();
  }
}
