import { format } from "node:util";
import type { ConsolaInstance, ConsolaReporter, LogObject } from "consola";

/** Fields consola sets on every log object; the rest are the caller's structured fields. */
const OWN = new Set(["date", "args", "type", "tag", "level", "message", "additional"]);

function errorFields(error: Error): Record<string, unknown> {
  return { error: { name: error.name, message: error.message, stack: error.stack } };
}

/**
 * `SERVICE_LOG_FORMAT=json`: one JSON object a line, `{"time","level","tag"?,"msg",…fields}`, with
 * the structured fields a caller passed (the access log's `request_id`, `method`, `route`,
 * `status`, `duration_ms`) and an `error` object for an error argument. Warnings and errors go to
 * stderr, the rest to stdout, as with text logs.
 */
export function jsonReporter(streams: {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}): ConsolaReporter {
  return {
    log(logObj: LogObject) {
      const fields: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(logObj)) if (!OWN.has(key)) fields[key] = value;
      const args = [...logObj.args];
      const error = args.find((arg): arg is Error => arg instanceof Error);
      const text = args.filter((arg) => arg !== error);
      const line = {
        time: logObj.date.toISOString(),
        level: logObj.type,
        ...(logObj.tag ? { tag: logObj.tag } : {}),
        msg: text.length > 0 ? format(...text) : (error?.message ?? ""),
        ...fields,
        ...(error ? errorFields(error) : {}),
      };
      const stream = logObj.level <= 1 ? streams.stderr : streams.stdout;
      stream.write(`${JSON.stringify(line)}\n`);
    },
  };
}

/** Switches `logger` (and the loggers later derived from it) to JSON lines on the process's streams. */
export function useJsonLogs(logger: ConsolaInstance): void {
  logger.setReporters([jsonReporter({ stdout: process.stdout, stderr: process.stderr })]);
}
