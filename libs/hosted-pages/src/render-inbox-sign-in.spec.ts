import { inboxReturnPath, renderInboxSignInPage, renderInboxSignInRefusedPage } from './render-inbox-sign-in';

describe('inbox sign-in', () => {
  it('returns only to the inbox pages of this site', () => {
    expect(inboxReturnPath('/inbox')).toBe('/inbox');
    expect(inboxReturnPath('/inbox/records?application_id=tp_dev_0123456789abcdef')).toBe('/inbox/records?application_id=tp_dev_0123456789abcdef');
    for (const away of ['//evil.example.com/inbox', 'https://evil.example.com/inbox', '/inbox/../admin', '/inboxx', '/inbox/records?x=<script>', '/\\evil.example.com', '', undefined, 42]) {
      expect([away, inboxReturnPath(away)]).toEqual([away, undefined]);
    }
  });

  it('carries where it leads through both forms', () => {
    const next = '/inbox/records?application_id=tp_dev_0123456789abcdef';
    for (const step of ['email', 'code'] as const) {
      expect(renderInboxSignInPage({ step, email: 'ada@example.com', next })).toContain(`<input type="hidden" name="next" value="${next}">`);
    }
    expect(renderInboxSignInPage({ step: 'email', next: '//evil.example.com' })).not.toContain('name="next"');
  });

  it('is titled after the page it leads to: the records page the receipt links to, else the pending requests', () => {
    const title = (page: string) => /<h1 id="page-title">([^<]*)<\/h1>/.exec(page)?.[1];
    for (const step of ['email', 'code'] as const) {
      const records = renderInboxSignInPage({ step, email: 'ada@example.com', next: '/inbox/records?application_id=tp_dev_0123456789abcdef&via=email' });
      expect(title(records)).toBe('Your consent records');
      expect(records).toContain('<title>Your consent records');
      expect(title(renderInboxSignInPage({ step, email: 'ada@example.com', next: '/inbox/records', locale: 'de' }))).toBe('Ihre Einwilligungen');
      expect(title(renderInboxSignInPage({ step, email: 'ada@example.com', next: '/inbox' }))).toBe('Your pending requests');
      expect(title(renderInboxSignInPage({ step, email: 'ada@example.com' }))).toBe('Your pending requests');
    }
  });

  it('offers a new code on the code step, which the rejected code\'s alert tells the person to ask for', () => {
    const next = '/inbox/records?application_id=tp_dev_0123456789abcdef';
    const page = renderInboxSignInPage({ step: 'code', email: 'ada@example.com', error: 'code', next });
    expect(page).toContain('send a new code');
    const resend = /<form id="inbox-resend"[^>]*action="\/inbox\/sign_in"[^>]*>([\s\S]*?)<\/form>/.exec(page)?.[1];
    expect(resend).toContain('<input type="hidden" name="email" value="ada@example.com">');
    expect(resend).toContain(`<input type="hidden" name="next" value="${next}">`);
    expect(resend).toContain('Send a new code');
  });

  it('answers a sign-in another website sent with what happened and a link to sign in here, back to the inbox page only', () => {
    const next = '/inbox/records?application_id=tp_dev_0123456789abcdef';
    const english = renderInboxSignInRefusedPage({ next });
    expect(english).toContain('<h1 id="page-title">Sign-in refused</h1>');
    expect(english).toContain('no code was sent and no one was signed in');
    expect(english).toContain(`href="${next}">Sign in here</a>`);
    expect(renderInboxSignInRefusedPage({ locale: 'de-DE' })).toContain('href="/inbox">Hier anmelden</a>');
    expect(renderInboxSignInRefusedPage({ next: '//evil.example.com/inbox' })).toContain('href="/inbox">');
    expect(english).not.toContain('<form');
  });
});
