import type { AnyVellumPlugin } from "@vellum/core";
import type { VellumServer } from "@vellum/core/node";
import type { ConsolaInstance } from "consola";

export interface CliOptions {
  /** Arguments after the binary name. */
  argv: string[];
  env: NodeJS.ProcessEnv;
  /** Working directory: where `vellum.config.*` is looked up and relative paths resolve. */
  cwd: string;
  /** The first-party plugins, created fresh for each run; the config file's plugins are appended. */
  defaultPlugins: () => AnyVellumPlugin[];
  version: string;
  /**
   * Prefixes of the environment variables that configure this distribution, besides the contract's `SERVICE_`
   * (always included): the namespaces its plugins' variables use, e.g. `["STORAGE_"]`. A variable that starts
   * with one of them and is set, but that neither the CLI nor an installed plugin declares, is reported with a
   * warning (name only) by `serve`, `--dry-run`, `config` and every other command that reads the configuration.
   */
  settingPrefixes?: string[];
  /**
   * Whether `serve` installs SIGTERM/SIGINT handlers that shut the server down gracefully and then exit the
   * process (default true). Hosts that run the CLI in-process turn this off and close the server themselves.
   */
  signals?: boolean;
  /** Called once `serve` listens, with the running server (its `close()` shuts everything down gracefully). */
  onListen?: (server: VellumServer) => void;
}

export interface CliContext extends CliOptions {
  logger: ConsolaInstance;
  /** One line of command output on stdout. */
  print(line: string): void;
  /** One line on stderr. */
  printError(line: string): void;
}
