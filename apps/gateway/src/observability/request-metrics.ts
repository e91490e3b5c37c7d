import type { MetricValue, MetricValueWithName, Registry } from 'prom-client';

/** Seconds; the same buckets the gateway's request histogram has always had. */
export const REQUEST_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

interface DurationSeries {
  method: string;
  route: string;
  /** Per bucket (not cumulative), the last cell for values above the largest bucket. */
  counts: number[];
  sum: number;
  count: number;
}

interface Cell {
  requests: { method: string; route: string; status: string; count: number };
  duration: DurationSeries;
}

/** What a registry reads from a metric when rendering it (prom-client's `MetricObjectWithValues`, without `collect`). */
interface Rendered<T> {
  name: string;
  help: string;
  type: string;
  aggregator: 'sum';
  values: T[];
}
type CounterObject = Rendered<MetricValue<'method' | 'route' | 'status'>>;
type HistogramObject = Rendered<MetricValueWithName<'method' | 'route' | 'le'>>;

/**
 * `http_requests_total` (method, route, status) and `http_request_duration_seconds` (method, route),
 * kept in plain numbers and handed to a prom-client registry as collectors: the registry renders them
 * (with its default labels) exactly as it renders its own counters and histograms. An observation is
 * one map lookup and a few additions, against prom-client's label hashing on every observation,
 * which was a measurable part of the busiest route's cost.
 */
export class RequestMetrics {
  private readonly cells = new Map<string, Cell>();
  private readonly durations = new Map<string, DurationSeries>();

  constructor(registry: Registry) {
    registry.registerMetric(this.requestsCollector() as never);
    registry.registerMetric(this.durationCollector() as never);
  }

  /**
   * A recorder for one route, known when the route is registered: it keeps that route's cells by
   * method and status, so an observation makes no label key (the gateway's per-route `onResponse`
   * hooks, and its global one for requests no route matched, as `unmatched`).
   */
  forRoute(route: string): (method: string, status: number, elapsedMs: number) => void {
    const byMethod = new Map<string, Map<number, Cell>>();
    return (method, status, elapsedMs) => {
      let byStatus = byMethod.get(method);
      if (byStatus === undefined) {
        byStatus = new Map();
        byMethod.set(method, byStatus);
      }
      let cell = byStatus.get(status);
      if (cell === undefined) {
        cell = this.cell(method, route, status);
        byStatus.set(status, cell);
      }
      this.record(cell, elapsedMs);
    };
  }

  private cell(method: string, route: string, status: number): Cell {
    const key = `${method} ${route} ${status}`;
    let cell = this.cells.get(key);
    if (cell === undefined) {
      cell = { requests: { method, route, status: String(status), count: 0 }, duration: this.durationSeries(method, route) };
      this.cells.set(key, cell);
    }
    return cell;
  }

  private record(cell: Cell, elapsedMs: number): void {
    cell.requests.count += 1;
    const seconds = elapsedMs / 1000;
    const series = cell.duration;
    let bucket = 0;
    while (bucket < REQUEST_DURATION_BUCKETS.length && seconds > REQUEST_DURATION_BUCKETS[bucket]) bucket += 1;
    series.counts[bucket] += 1;
    series.sum += seconds;
    series.count += 1;
  }

  private durationSeries(method: string, route: string): DurationSeries {
    const key = `${method} ${route}`;
    let series = this.durations.get(key);
    if (series === undefined) {
      series = { method, route, counts: new Array<number>(REQUEST_DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      this.durations.set(key, series);
    }
    return series;
  }

  private requestsCollector() {
    const cells = this.cells;
    return {
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route and status',
      type: 'counter',
      aggregator: 'sum',
      // The name is read when rendering: an OpenMetrics registry renames counters (drops `_total`).
      get(): CounterObject {
        return {
          name: this.name,
          help: this.help,
          type: this.type,
          aggregator: 'sum',
          values: [...cells.values()].map(({ requests }) => ({
            labels: { method: requests.method, route: requests.route, status: requests.status },
            value: requests.count,
          })),
        };
      },
    };
  }

  private durationCollector() {
    const durations = this.durations;
    const name = 'http_request_duration_seconds';
    return {
      name,
      help: 'Time to answer an HTTP request',
      type: 'histogram',
      aggregator: 'sum',
      get(): HistogramObject {
        const values: MetricValueWithName<'method' | 'route' | 'le'>[] = [];
        for (const series of durations.values()) {
          const labels = { method: series.method, route: series.route };
          let cumulative = 0;
          REQUEST_DURATION_BUCKETS.forEach((le, index) => {
            cumulative += series.counts[index];
            values.push({ metricName: `${name}_bucket`, labels: { le, ...labels }, value: cumulative });
          });
          values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...labels }, value: series.count });
          values.push({ metricName: `${name}_sum`, labels, value: series.sum });
          values.push({ metricName: `${name}_count`, labels, value: series.count });
        }
        return { name, help: 'Time to answer an HTTP request', type: 'histogram', aggregator: 'sum', values };
      },
    };
  }
}
