export type { ReadingTimeChanged } from "./events.js";
export { readingLog } from "./reading-log.js";
export { estimateMinutes, readingTime, type ReadingTimeOptions, type ReadingTimeTables } from "./reading-time.js";
