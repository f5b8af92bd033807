// Child process: serves the bench's data dir over HTTP. Usage: node server.mjs --data-dir <dir> --port <n>
import { argsOf, benchInstance } from "./instance.mjs";

const { dataDir, port } = argsOf(process.argv);
const { vellum } = benchInstance(dataDir);
await vellum.listen({ port, host: "127.0.0.1", signals: true });
