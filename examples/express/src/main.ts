import { createApp } from "./app.js";

const apiKey = process.env.CMS_API_KEY;
if (!apiKey) throw new Error("set CMS_API_KEY (24 characters or more)");
const { app, vellum } = await createApp({ dataDir: process.env.CMS_DATA_DIR ?? "./data", apiKey });
const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1");
process.once("SIGTERM", () => server.close(() => void vellum.close()));
