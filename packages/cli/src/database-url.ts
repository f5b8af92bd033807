import { fileURLToPath } from "node:url";
import type { Parsed } from "@vellum/core";

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

function sqlitePath(path: string): Parsed<string> {
  return path === "" ? { ok: false, problem: "the SQLite file path is empty" } : { ok: true, value: path };
}

/**
 * `SERVICE_DATABASE_URL` → the SQLite file path as written (relative paths resolve against the working
 * directory later). Accepts `sqlite:<path>`, `sqlite://<path>`, `file:` URLs and plain paths. Problems never
 * repeat the URL, since database URLs carry passwords.
 */
export function parseDatabaseUrl(text: string): Parsed<string> {
  const lower = text.toLowerCase();
  if (lower.startsWith("postgres:") || lower.startsWith("postgresql:")) {
    return {
      ok: false,
      problem: "PostgreSQL is not supported yet (it arrives with scale-out); unset it to use SQLite in <data>/db/",
    };
  }
  if (lower.startsWith("sqlite:")) return sqlitePath(text.slice("sqlite:".length).replace(/^\/\//, ""));
  if (lower.startsWith("file://")) {
    try {
      return sqlitePath(fileURLToPath(text));
    } catch {
      return { ok: false, problem: "the file: URL is not a valid local file path" };
    }
  }
  if (lower.startsWith("file:")) return sqlitePath(text.slice("file:".length));
  const scheme = SCHEME.exec(text);
  if (scheme) return { ok: false, problem: `the scheme '${scheme[1]}:' is not supported; use a sqlite: URL or a path` };
  return sqlitePath(text);
}
