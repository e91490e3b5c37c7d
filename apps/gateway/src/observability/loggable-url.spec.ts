import { loggableUrl } from './loggable-url';

describe('loggableUrl', () => {
  it('keeps the path and harmless parameters, and hides every other value', () => {
    expect(loggableUrl('/api/v1/me')).toBe('/api/v1/me');
    expect(loggableUrl('/api/v1/applications/tp_dev_1/consent_status?subject%5Bemail%5D=ada%40example.com')).toBe(
      '/api/v1/applications/tp_dev_1/consent_status?subject%5Bemail%5D=…',
    );
    expect(loggableUrl('/api/v1/decisions/dts_us1/verify?consent_token=abc.def')).toBe('/api/v1/decisions/dts_us1/verify?consent_token=…');
    expect(loggableUrl('/api/v1/applications/tp_dev_1/audit?limit=50&cursor=c1&type=consent.granted&x=secret')).toBe(
      '/api/v1/applications/tp_dev_1/audit?limit=50&cursor=c1&type=consent.granted&x=…',
    );
    expect(loggableUrl('/_dev/mailbox?to=ada@example.com')).not.toContain('ada');
  });
});
