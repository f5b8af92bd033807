import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { RequestMetrics } from "../src/metrics/request-metrics.js";

describe("request metrics", () => {
  it("count requests by method, route and status class, with cumulative duration buckets", async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    metrics.record("GET", "/a", 200, 0.0005);
    metrics.record("GET", "/a", 204, 0.003);
    metrics.record("GET", "/a", 200, 42);
    metrics.record("GET", "/a", 404, 0.001);
    metrics.record("POST", "/a", 201, 0.2);

    const counter = await registry.getSingleMetricAsString("service_requests_total");
    expect(counter).toContain("# TYPE service_requests_total counter");
    expect(counter).toContain('service_requests_total{method="GET",route="/a",status="2xx"} 3');
    expect(counter).toContain('service_requests_total{method="GET",route="/a",status="4xx"} 1');
    expect(counter).toContain('service_requests_total{method="POST",route="/a",status="2xx"} 1');

    const histogram = await registry.getSingleMetricAsString("service_request_duration_seconds");
    expect(histogram).toContain("# TYPE service_request_duration_seconds histogram");
    const sample = (suffix: string) =>
      histogram
        .split("\n")
        .find((line) => line.startsWith(`service_request_duration_seconds_${suffix}`))
        ?.split(" ")[1];
    expect(sample('bucket{method="GET",route="/a",status="2xx",le="0.001"}')).toBe("1");
    expect(sample('bucket{method="GET",route="/a",status="2xx",le="0.005"}')).toBe("2");
    expect(sample('bucket{method="GET",route="/a",status="2xx",le="10"}')).toBe("2");
    expect(sample('bucket{method="GET",route="/a",status="2xx",le="+Inf"}')).toBe("3");
    expect(Number(sample('sum{method="GET",route="/a",status="2xx"}'))).toBeCloseTo(42.0035, 6);
    expect(sample('count{method="GET",route="/a",status="2xx"}')).toBe("3");
    expect(sample('bucket{method="GET",route="/a",status="4xx",le="0.001"}')).toBe("1");
  });
});
