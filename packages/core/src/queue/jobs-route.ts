import { Type } from "typebox";
import { ApiError } from "../errors/api-error.js";
import { json } from "../http/json.js";
import { pathParam } from "../http/params.js";
import type { RouteTable } from "../http/routes.js";
import { jobErrorBody } from "./job-error.js";
import type { JobQueue } from "./job-queue.js";

const JOB_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const JobState = Type.Object({
  id: Type.String(),
  status: Type.Enum(["queued", "applied", "failed"]),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});

const schema = {
  summary: "The outcome of a queued write, by the id its 202 gave",
  tags: ["jobs"],
  params: Type.Object({ id: Type.String({ description: "The job id (a ULID)" }) }),
  response: {
    200: { description: "`queued`, `applied`, or `failed` with the error's code", body: JobState },
    404: { description: "No such job" },
  },
};

/**
 * `GET /api/v1/jobs/:id`: the outcome of any plugin's queued write, by the id its 202 gave.
 * `queued` while it waits (with `error` while it is being retried), `applied` once done (also
 * after the kernel pruned it, when its queue says so), `failed` with `error` once it is in the
 * dead-letter queue. The error is a code and a generic message; the raw one stays in the log.
 */
export function registerJobsRoute(routes: RouteTable, queue: () => JobQueue): void {
  const notFound = () => new ApiError("not_found", "No such job.");
  routes.add(
    "core",
    "GET",
    "/api/v1/jobs/:id",
    async (event) => {
      const id = pathParam(event, "id");
      if (!JOB_ID.test(id)) throw notFound();
      const job = await queue().get(id);
      if (!job) {
        if (await queue().appliedBeforePrune(id)) return json({ id, status: "applied" });
        throw notFound();
      }
      if (job.status === "applied" || job.attempts === 0) return json({ id, status: job.status });
      return json({ id, status: job.status, error: jobErrorBody(job.error_code, job.status) });
    },
    { schema },
  );
}
