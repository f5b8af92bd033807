import { createApp } from "./app.js";

const apiKey = process.env.CMS_API_KEY;
if (!apiKey) throw new Error("set CMS_API_KEY (24 characters or more)");
const { server, vellum } = await createApp({ dataDir: process.env.CMS_DATA_DIR ?? "./data", apiKey });
server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => console.log("listening on http://127.0.0.1:3000"));
process.once("SIGTERM", () => server.close(() => void vellum.close()));
