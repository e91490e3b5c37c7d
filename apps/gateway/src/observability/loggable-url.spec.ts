import { loggableUrl } from './loggable-url';

describe('loggableUrl', () => {
  it('keeps the path and harmless parameters, and hides every other value', () => {
    expect(loggableUrl('/api/v1/me')).toBe('/api/v1/me');
    expect(loggableUrl('/api/v1/applications/tp_dev_1/consent_status?subject%5Bemail%5D=ada%40example.com')).toBe(
      '/api/v1/applications/tp_dev_1/consent_status?subject%5Bemail%5D=…',
    );
    expect(loggableUrl('/api/v1/decisions/dts_us1/verify?consent_token=abc.def')).toBe('/api/v1/decisions/dts_us…/verify?consent_token=…');
    expect(loggableUrl('/api/v1/applications/tp_dev_1/audit?limit=50&cursor=c1&type=consent.granted&x=secret')).toBe(
      '/api/v1/applications/tp_dev_1/audit?limit=50&cursor=c1&type=consent.granted&x=…',
    );
    expect(loggableUrl('/_dev/mailbox?to=ada@example.com')).not.toContain('ada');
  });

  it('hides the tokens that are credentials when a path carries them (a session token, a capture token, a preview link), keeping their kind and country', () => {
    const session = 'dts_us0123456789abcdefghijklmnopqrst';
    expect(loggableUrl(`/api/v1/decisions/${session}/complete`)).toBe('/api/v1/decisions/dts_us…/complete');
    expect(loggableUrl(`/decisions/${session}/embed?lang=de`)).toBe('/decisions/dts_us…/embed?lang=de');
    expect(loggableUrl(`/api/v1/consent_sessions/${session}/verify?consent_token=x`)).toBe('/api/v1/consent_sessions/dts_us…/verify?consent_token=…');
    expect(loggableUrl('/api/v1/decisions/cap_de0123456789abcdefghijklmnopqrst/authorize')).toBe('/api/v1/decisions/cap_de…/authorize');
    expect(loggableUrl('/preview/eyJhbGciOiJIUzI1NiJ9.eyJ0cGwiOiJ0cGxfdXMxIn0.c2lnbmF0dXJl?device=phone')).toBe('/preview/…?device=phone');
    // Ids that are not credentials stay, so a line still says what was asked for.
    expect(loggableUrl('/api/v1/consent_receipts/rec_us0123456789abcdefghij')).toBe('/api/v1/consent_receipts/rec_us0123456789abcdefghij');
    expect(loggableUrl('/api/v1/flows/flw_dev_abc/activate')).toBe('/api/v1/flows/flw_dev_abc/activate');
  });
});
