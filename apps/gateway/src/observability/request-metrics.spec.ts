import { Counter, Histogram, Registry } from 'prom-client';
import { REQUEST_DURATION_BUCKETS, RequestMetrics } from './request-metrics';

/** The same metrics as prom-client's own Counter and Histogram, as the gateway had them before. */
function referenceRegistry() {
  const registry = new Registry();
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request',
    labelNames: ['method', 'route'] as const,
    buckets: [...REQUEST_DURATION_BUCKETS],
    registers: [registry],
  });
  return {
    registry,
    observe(method: string, route: string, status: number, elapsedMs: number) {
      requests.labels(method, route, String(status)).inc();
      duration.labels(method, route).observe(elapsedMs / 1000);
    },
  };
}

/**
 * Exposition lines with each sample's labels in name order, sorted: the order of series and of labels
 * within a sample carries no meaning (prom-client itself places default labels differently in its
 * histogram than in its counter).
 */
const lines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => line.replace(/\{([^}]*)\}/, (_all, labels: string) => `{${labels.split(/,(?=[a-z_]+=")/).sort().join(',')}}`))
    .sort();

describe('RequestMetrics', () => {
  const observations: [string, string, number, number][] = [
    ['GET', '/api/v1/me', 200, 0.4],
    ['GET', '/api/v1/me', 200, 1], // exactly on a bucket boundary: counted in that bucket
    ['GET', '/api/v1/me', 429, 3.2],
    ['POST', '/api/v1/decisions', 201, 12.5],
    ['POST', '/api/v1/decisions', 422, 250],
    ['GET', 'unmatched', 404, 9000], // above the largest bucket: only in +Inf
  ];

  it.each([
    ['Prometheus text', (r: Registry) => r.metrics()],
    [
      'OpenMetrics text',
      (r: Registry) => {
        (r as unknown as Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
        return r.metrics();
      },
    ],
  ])("renders through the registry the same samples as prom-client's own counter and histogram (%s)", async (_format, render) => {
    const ours = new Registry();
    ours.setDefaultLabels({ country: 'US' });
    const metrics = new RequestMetrics(ours);
    const reference = referenceRegistry();
    reference.registry.setDefaultLabels({ country: 'US' });
    for (const [method, route, status, ms] of observations) {
      metrics.forRoute(route)(method, status, ms);
      reference.observe(method, route, status, ms);
    }
    const expected = await render(reference.registry);
    expect(expected).toContain('http_request_duration_seconds_bucket');
    expect(lines(await render(ours))).toEqual(lines(expected));
  });

  it('counts each request once, in the first bucket at or above its duration', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    const healthz = metrics.forRoute('/healthz');
    healthz('GET', 200, 4);
    healthz('GET', 200, 6);
    healthz('GET', 503, 6);
    const text = await registry.metrics();
    expect(text).toContain('http_requests_total{method="GET",route="/healthz",status="200"} 2');
    expect(text).toContain('http_requests_total{method="GET",route="/healthz",status="503"} 1');
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.0025",method="GET",route="/healthz"} 0');
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.005",method="GET",route="/healthz"} 1');
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.01",method="GET",route="/healthz"} 3');
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/healthz"} 3');
  });

  it('keeps one series per method, route and status, however many recorders reach it', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    const me = metrics.forRoute('/api/v1/me');
    me('GET', 200, 1);
    me('GET', 200, 30);
    me('HEAD', 200, 1);
    me('GET', 401, 1);
    metrics.forRoute('/api/v1/me')('GET', 200, 1); // a second recorder of the same route: the same cell
    const text = await registry.metrics();
    expect(text).toContain('http_requests_total{method="GET",route="/api/v1/me",status="200"} 3');
    expect(text).toContain('http_requests_total{method="HEAD",route="/api/v1/me",status="200"} 1');
    expect(text).toContain('http_requests_total{method="GET",route="/api/v1/me",status="401"} 1');
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.025",method="GET",route="/api/v1/me"} 3');
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/api/v1/me"} 4');
  });
});
