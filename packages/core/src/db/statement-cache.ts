import type { Database, Statement } from "better-sqlite3";

/** The part of better-sqlite3's `Database` that kysely's SQLite dialect uses. */
export interface PreparingDatabase {
  prepare(sql: string): Statement;
  close(): void;
}

/** SQL starting with this comment is prepared in pluck mode: it returns its first column's values. */
export const COLUMN_SQL_PREFIX = "/* vellum:column */ ";

/**
 * Wraps a better-sqlite3 database so kysely reuses prepared statements: its driver calls
 * `prepare()` for every query, which costs more than running most of our queries. Statements are
 * kept per SQL text, least recently used evicted first. Reuse is safe because kysely runs one
 * query at a time on its single connection. Statements of `PreparedColumn` (their SQL starts with
 * `COLUMN_SQL_PREFIX`) return values instead of row objects; kysely passes rows through untouched.
 */
export function withStatementCache(database: Database, max = 500): PreparingDatabase {
  const cache = new Map<string, Statement>();
  return {
    prepare(sql) {
      const cached = cache.get(sql);
      if (cached) {
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const statement = database.prepare(sql);
      if (sql.startsWith(COLUMN_SQL_PREFIX)) statement.pluck(true);
      cache.set(sql, statement);
      if (cache.size > max) cache.delete(cache.keys().next().value as string);
      return statement;
    },
    close() {
      cache.clear();
      database.close();
    },
  };
}
