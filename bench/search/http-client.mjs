import { Agent, request } from "node:http";

/**
 * Sends each query in turn over one keep-alive connection and times request → full body.
 * @param {string} base @param {Array<{ q: string }>} queries
 * @returns {Promise<{ ms: number[], failures: number }>}
 */
export async function timeQueries(base, queries) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const ms = [];
  let failures = 0;
  for (const { q } of queries) {
    const url = `${base}/api/v1/search?${new URLSearchParams({ q, limit: "20" })}`;
    const started = performance.now();
    const status = await new Promise((resolve, reject) => {
      const req = request(url, { agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode));
      });
      req.on("error", reject);
      req.end();
    });
    ms.push(performance.now() - started);
    if (status !== 200) failures++;
  }
  agent.destroy();
  return { ms, failures };
}
