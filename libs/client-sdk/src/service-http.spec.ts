import {
  APIError,
  AuthenticationError,
  ConflictError,
  errorFromResponse,
  ForbiddenError,
  GoneError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  requestJson,
  retryAfterMs,
  ServiceConnectionError,
  ServiceError,
  ServiceTimeoutError,
  WrongCountryError,
} from './service-http';

const errorBody = (code: string, extra: Record<string, unknown> = {}) => ({ message: `failed: ${code}`, code, request_id: 'req_0123456789abcdef', ...extra });

function reply(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

describe('errorFromResponse', () => {
  it.each([
    [400, InvalidRequestError],
    [401, AuthenticationError],
    [403, ForbiddenError],
    [404, NotFoundError],
    [409, ConflictError],
    [410, GoneError],
    [421, WrongCountryError],
    [422, InvalidRequestError],
    [429, RateLimitError],
    [418, InvalidRequestError],
    [500, APIError],
    [501, APIError],
    [503, APIError],
  ])('maps %i to %p, keeping statusCode and the body', (status, type) => {
    const body = errorBody('some_code', { details: [{ field: 'flow_id', reason: 'no such flow' }, { bogus: true }] });
    const error = errorFromResponse({ statusCode: status, body, headers: {} });
    expect(error).toBeInstanceOf(type);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.name).toBe((type as { name: string }).name);
    expect(error).toMatchObject({ statusCode: status, code: 'some_code', message: 'failed: some_code', body, requestId: 'req_0123456789abcdef' });
    expect(error.details).toEqual([{ field: 'flow_id', reason: 'no such flow' }]);
  });

  it('carries home_country on a 421 and survives a body that is not JSON', () => {
    expect((errorFromResponse({ statusCode: 421, body: errorBody('wrong_country', { home_country: 'DE' }), headers: {} }) as WrongCountryError).homeCountry).toBe('DE');
    const bare = errorFromResponse({ statusCode: 502, body: undefined, headers: { 'x-request-id': 'req_x' } });
    expect(bare).toMatchObject({ statusCode: 502, code: 'http_502', message: 'The service answered HTTP 502', requestId: 'req_x', details: [] });
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs('Thu, 01 Jan 1970 00:00:10 GMT', 4000)).toBe(6000);
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });
});

describe('requestJson', () => {
  const url = 'https://api.example.com/api/v1/decisions';

  it('answers the parsed body of a 2xx and sends JSON with an Idempotency-Key on POST', async () => {
    const calls: RequestInit[] = [];
    const result = await requestJson({
      method: 'POST',
      url,
      body: { flow_id: 'flw_dev_0123456789abcdef' },
      headers: { 'X-Publishable-Key': 'pk_test_x' },
      timeoutMs: 1000,
      fetch: async (_url, init) => {
        calls.push(init!);
        return reply(201, { session_token: 'dts_us1' });
      },
    });
    expect(result).toEqual({ session_token: 'dts_us1' });
    const headers = calls[0].headers as Record<string, string>;
    expect(headers).toMatchObject({ 'Content-Type': 'application/json', 'X-Publishable-Key': 'pk_test_x', 'Idempotency-Key': expect.stringMatching(/^sdk-/) });
    expect(calls[0]).toMatchObject({ method: 'POST', body: '{"flow_id":"flw_dev_0123456789abcdef"}', credentials: 'omit' });
  });

  it('raises the typed error of a 4xx without retrying', async () => {
    let calls = 0;
    const failing = requestJson({
      method: 'POST',
      url,
      body: {},
      timeoutMs: 1000,
      fetch: async () => {
        calls += 1;
        return reply(422, errorBody('validation_failed', { details: [{ field: 'flow_id', reason: 'no such flow in this application' }] }));
      },
    });
    await expect(failing).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(failing).rejects.toMatchObject({ statusCode: 422, details: [{ field: 'flow_id', reason: 'no such flow in this application' }] });
    expect(calls).toBe(1);
  });

  it('retries a 429 after Retry-After and a 503, with the same Idempotency-Key, but not a 501', async () => {
    const keys: string[] = [];
    const answers = [reply(429, errorBody('rate_limited'), { 'retry-after': '0' }), reply(503, errorBody('service_unavailable')), reply(200, { ok: true })];
    const result = await requestJson({
      method: 'POST',
      url,
      body: {},
      timeoutMs: 5000,
      fetch: async (_url, init) => {
        keys.push((init!.headers as Record<string, string>)['Idempotency-Key']);
        return answers.shift()!;
      },
    });
    expect(result).toEqual({ ok: true });
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);

    let calls = 0;
    await expect(
      requestJson({ method: 'GET', url, timeoutMs: 1000, fetch: async () => (calls++, reply(501, errorBody('not_implemented'))) }),
    ).rejects.toMatchObject({ name: 'APIError', statusCode: 501, code: 'not_implemented' });
    expect(calls).toBe(1);
  });

  it('raises ServiceConnectionError when nothing answers, and ServiceTimeoutError past the timeout', async () => {
    await expect(
      requestJson({ method: 'GET', url, timeoutMs: 1000, fetch: async () => Promise.reject(new TypeError('Failed to fetch')) }),
    ).rejects.toMatchObject({ name: 'ServiceConnectionError', code: 'connection_error', statusCode: undefined });
    const hanging = (_url: unknown, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    const timedOut = requestJson({ method: 'GET', url, timeoutMs: 50, fetch: hanging as typeof fetch });
    await expect(timedOut).rejects.toBeInstanceOf(ServiceTimeoutError);
    await expect(timedOut).rejects.toBeInstanceOf(ServiceConnectionError);
    await expect(timedOut).rejects.toMatchObject({ code: 'timeout', timeoutMs: 50 });
  });
});
