import type { Database, Statement } from "better-sqlite3";

/** The part of better-sqlite3's `Database` that kysely's SQLite dialect uses. */
export interface PreparingDatabase {
  prepare(sql: string): Statement;
  close(): void;
}

/**
 * Wraps a better-sqlite3 database so kysely reuses prepared statements: its driver calls
 * `prepare()` for every query, which costs more than running most of our queries. Statements are
 * kept per SQL text, least recently used evicted first. Reuse is safe because kysely runs one
 * query at a time on its single connection.
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
