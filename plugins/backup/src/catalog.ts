import { mkdir, readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { GenerationResult } from "./generation/index.js";
import { writeFileAtomic } from "./restore/durable.js";

/**
 * The plugin's own records in `<dataDir>/backup/` (mode 0700; never part of a generation, whose
 * folders are an allowlist): one file per generation this data dir published, with what the drill
 * compares (content root, rows per table), and the last backup and the last drill, each one file
 * overwritten. Files, not tables: the CLI's offline commands write them without opening the database.
 */
export type GenerationRecord = Pick<
  GenerationResult,
  "name" | "id" | "createdMs" | "sealedMs" | "bytes" | "contentRoot" | "tableCounts"
>;

/** The last backup run, failed or not. */
export interface BackupRunResult {
  at: string;
  ok: boolean;
  durationMs: number;
  /** The published generation's name when ok. */
  generation?: string;
  /** The error code and message when not ok. */
  code?: string;
  error?: string;
}

/** The last restore drill: `{at, generationId, generationCreatedAt, ok, durationMs, failedCheck, error}`. */
export interface DrillResult {
  at: string;
  ok: boolean;
  durationMs: number;
  generation: string | null;
  generationId: string | null;
  generationCreatedAt: string | null;
  failedCheck: string | null;
  error: string | null;
}

const FOLDER = "backup";
const GENERATIONS = "generations";
const LAST_BACKUP = "last-backup.json";
const LAST_DRILL = "last-drill.json";

export class BackupCatalog {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, FOLDER);
  }

  async recordGeneration(result: GenerationResult): Promise<void> {
    const { name, id, createdMs, sealedMs, bytes, contentRoot, tableCounts } = result;
    const record: GenerationRecord = { name, id, createdMs, sealedMs, bytes, contentRoot, tableCounts };
    await this.#write(join(this.dir, GENERATIONS), `${result.name}.json`, record);
  }

  /** What this data dir recorded when it published `name`, if it did. */
  generation(name: string): Promise<GenerationRecord | undefined> {
    return this.#read<GenerationRecord>(join(this.dir, GENERATIONS, `${name}.json`));
  }

  /** Forgets the records of generations no longer in the target (after retention removed them). */
  async forgetExcept(names: ReadonlySet<string>): Promise<void> {
    const dir = join(this.dir, GENERATIONS);
    const files = await readdir(dir).catch(() => [] as string[]);
    for (const file of files) {
      if (file.endsWith(".json") && !names.has(file.slice(0, -".json".length))) {
        await unlink(join(dir, file)).catch(() => undefined);
      }
    }
  }

  recordBackup(result: BackupRunResult): Promise<void> {
    return this.#write(this.dir, LAST_BACKUP, result);
  }

  lastBackup(): Promise<BackupRunResult | undefined> {
    return this.#read<BackupRunResult>(join(this.dir, LAST_BACKUP));
  }

  recordDrill(result: DrillResult): Promise<void> {
    return this.#write(this.dir, LAST_DRILL, result);
  }

  lastDrill(): Promise<DrillResult | undefined> {
    return this.#read<DrillResult>(join(this.dir, LAST_DRILL));
  }

  async #write(dir: string, name: string, value: unknown): Promise<void> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(dir, name, `.${name}.tmp-`, Buffer.from(`${JSON.stringify(value, null, 2)}\n`));
  }

  async #read<T>(path: string): Promise<T | undefined> {
    try {
      return JSON.parse(await readFile(path, "utf8")) as T;
    } catch {
      return undefined;
    }
  }
}
