import type { Registry } from "prom-client";

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels = { method: string; route: string; status: string };

/** One method, route pattern and status class: its count, total seconds and count per bucket. */
interface Tally {
  readonly labels: Labels;
  count: number;
  sum: number;
  readonly buckets: Float64Array;
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * `service_requests_total` and `service_request_duration_seconds`, tallied in plain numbers per
 * label combination and shown to the registry as a counter and a histogram when it is read.
 * prom-client builds and hashes a label string on every `inc` and `observe`, even through a
 * labelled child, which every request would pay for (docs/benchmarks.md, "Instructions a request").
 */
export class RequestMetrics {
  readonly #tallies = new Map<string, Tally>();

  constructor(registry: Registry) {
    const view = (name: string, help: string, type: string, values: () => Sample[]) => ({
      name,
      help,
      type,
      aggregator: "sum",
      get: () => ({ name, help, type, values: values(), aggregator: "sum" }),
      reset: () => this.#tallies.clear(),
    });
    const counter = view(
      "service_requests_total",
      "HTTP requests by method, route pattern and status class",
      "counter",
      () => [...this.#tallies.values()].map((t) => ({ labels: t.labels, value: t.count })),
    );
    const histogram = view(
      "service_request_duration_seconds",
      "HTTP request duration in seconds by method, route pattern and status class",
      "histogram",
      () => [...this.#tallies.values()].flatMap((t) => this.#histogramSamples(t)),
    );
    // The registry reads a metric through `get()` alone; these are not prom-client's classes.
    registry.registerMetric(counter as never);
    registry.registerMetric(histogram as never);
  }

  /** One answered request; `status` is recorded by its class (`2xx`). */
  record(method: string, route: string, status: number, seconds: number): void {
    const statusClass = `${Math.floor(status / 100)}xx`;
    const key = `${method} ${route} ${statusClass}`;
    let tally = this.#tallies.get(key);
    if (!tally) {
      tally = {
        labels: { method, route, status: statusClass },
        count: 0,
        sum: 0,
        buckets: new Float64Array(BUCKETS.length),
      };
      this.#tallies.set(key, tally);
    }
    tally.count++;
    tally.sum += seconds;
    const bucket = BUCKETS.findIndex((bound) => seconds <= bound);
    if (bucket !== -1) tally.buckets[bucket] = (tally.buckets[bucket] as number) + 1;
  }

  #histogramSamples(tally: Tally): Sample[] {
    const name = "service_request_duration_seconds";
    let cumulative = 0;
    const samples: Sample[] = BUCKETS.map((bound, i) => {
      cumulative += tally.buckets[i] as number;
      return { metricName: `${name}_bucket`, labels: { ...tally.labels, le: bound }, value: cumulative };
    });
    samples.push(
      { metricName: `${name}_bucket`, labels: { ...tally.labels, le: "+Inf" }, value: tally.count },
      { metricName: `${name}_sum`, labels: tally.labels, value: tally.sum },
      { metricName: `${name}_count`, labels: tally.labels, value: tally.count },
    );
    return samples;
  }
}
