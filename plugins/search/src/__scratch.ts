import { definePlugin, type KernelTables, type Transaction } from "@vellum/core";

interface DocsTable { rowid: number; article_id: string; slug: string; updated_at: string }
interface SearchTables {
  search_generations: { generation: number };
  [table: `search_docs_g${number}`]: DocsTable;
}
export const p = definePlugin<Record<string, unknown>, SearchTables>({
  name: "x",
  setup(ctx) {
    ctx.hooks.hook("article:commit", async ({ trx }) => {
      const a = ctx.transaction(trx);
      const b = ctx.transaction(trx as Transaction<never>);
      const c: Transaction<SearchTables & KernelTables> = b;
      await c.selectFrom("search_generations").selectAll().execute();
      return void a;
    });
    void ctx.write(async (w) => {
      await w.trx.selectFrom("search_docs_g1").selectAll().execute();
      const d: Transaction<never> = w.trx;
      return d;
    });
    void ctx.db.selectFrom("search_docs_g3").select("slug").execute();
  },
});
