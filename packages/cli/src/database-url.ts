import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Parsed } from "./parse.js";

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

function sqlitePath(path: string, cwd: string): Parsed<string> {
  if (path === "") return { ok: false, problem: "the SQLite file path is empty" };
  if (path === ":memory:") return { ok: true, value: path };
  return { ok: true, value: isAbsolute(path) ? path : resolve(cwd, path) };
}

/**
 * `SERVICE_DATABASE_URL` → the SQLite file path. Accepts `sqlite:<path>`, `sqlite://<path>`, `file:` URLs and
 * plain paths. Problems never repeat the URL, since database URLs carry passwords.
 */
export function parseDatabaseUrl(text: string, cwd: string): Parsed<string> {
  const lower = text.toLowerCase();
  if (lower.startsWith("postgres:") || lower.startsWith("postgresql:")) {
    return {
      ok: false,
      problem: "PostgreSQL is not supported yet (it arrives with scale-out); unset it to use SQLite in <data>/db/",
    };
  }
  if (lower.startsWith("sqlite:")) return sqlitePath(text.slice("sqlite:".length).replace(/^\/\//, ""), cwd);
  if (lower.startsWith("file://")) {
    try {
      return sqlitePath(fileURLToPath(text), cwd);
    } catch {
      return { ok: false, problem: "the file: URL is not a valid local file path" };
    }
  }
  if (lower.startsWith("file:")) return sqlitePath(text.slice("file:".length), cwd);
  const scheme = SCHEME.exec(text);
  if (scheme) return { ok: false, problem: `the scheme '${scheme[1]}:' is not supported; use a sqlite: URL or a path` };
  return sqlitePath(text, cwd);
}
