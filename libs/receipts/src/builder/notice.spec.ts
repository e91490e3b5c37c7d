import { createHash } from 'node:crypto';
import { canonicalJson, DomainError, noticeFingerprint as domainNoticeFingerprint, normaliseFlowTerms } from '@dcr/domain';
import { FLOW_ID, NEWSLETTER_FLOW_BODY, newsletterTerms } from '../testing';
import { NoticeContentInput, NoticeMemo, noticeContentOf, noticeFingerprint, privacyNotice, uriOfUrl } from './notice';

const notice = (): NoticeContentInput => ({
  locale: 'en-GB',
  title: 'Stay in touch',
  description: 'Choose what we may do.',
  policyUrl: 'https://acme.example/privacy',
  purposes: [
    { name: 'marketing', label: 'Newsletter', description: 'Monthly', mechanism: 'explicit', required: false },
    { name: 'analytics', label: 'Analytics', description: null, mechanism: 'opt_out', required: false },
    { name: 'tos', label: 'Terms', mechanism: 'notice', required: true },
  ],
});

describe('noticeFingerprint', () => {
  it('is lower-case hex sha256 of the canonical JSON over exactly the listed items, rows sorted by name', () => {
    const expected = createHash('sha256')
      .update(
        canonicalJson({
          locale: 'en-GB',
          title: 'Stay in touch',
          description: 'Choose what we may do.',
          policy_url: 'https://acme.example/privacy',
          purposes: [
            { name: 'analytics', label: 'Analytics', description: null, mechanism: 'opt_out', required: false },
            { name: 'marketing', label: 'Newsletter', description: 'Monthly', mechanism: 'explicit', required: false },
            { name: 'tos', label: 'Terms', description: null, mechanism: 'notice', required: true },
          ],
        }),
      )
      .digest('hex');
    expect(noticeFingerprint(notice())).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is stable across key order, row order and absent-versus-null texts', () => {
    const a = notice();
    const reordered: NoticeContentInput = {
      purposes: [...a.purposes].reverse().map((row) => ({ required: row.required, mechanism: row.mechanism, description: row.description, label: row.label, name: row.name })),
      policyUrl: a.policyUrl,
      description: a.description,
      title: a.title,
      locale: a.locale,
    };
    expect(noticeFingerprint(reordered)).toBe(noticeFingerprint(a));
    const withNulls = { ...a, title: null, description: null, policyUrl: null };
    const withAbsent: NoticeContentInput = { locale: a.locale, purposes: a.purposes };
    expect(noticeFingerprint(withAbsent)).toBe(noticeFingerprint(withNulls));
  });

  it('changes with any drift in a listed item', () => {
    const base = noticeFingerprint(notice());
    const row = (change: object) => ({ ...notice(), purposes: notice().purposes.map((p, i) => (i === 0 ? { ...p, ...change } : p)) });
    const drifts: NoticeContentInput[] = [
      { ...notice(), locale: 'de-DE' },
      { ...notice(), title: 'Stay in touch!' },
      { ...notice(), title: null },
      { ...notice(), description: 'Choose what we may do' },
      { ...notice(), policyUrl: 'https://acme.example/privacy?v=2' },
      { ...notice(), policyUrl: null },
      row({ name: 'marketing_email' }),
      row({ label: 'Newsletter (monthly)' }),
      row({ description: 'Weekly' }),
      row({ description: null }),
      row({ mechanism: 'informed' }),
      row({ required: true }),
      { ...notice(), purposes: notice().purposes.slice(1) },
      { ...notice(), purposes: [...notice().purposes, { name: 'sms', label: 'SMS', mechanism: 'explicit', required: false }] },
    ];
    const fingerprints = drifts.map(noticeFingerprint);
    for (const fingerprint of fingerprints) expect(fingerprint).not.toBe(base);
    expect(new Set(fingerprints).size).toBe(fingerprints.length);
  });

  it('ignores everything it does not list', () => {
    const withExtras = {
      ...notice(),
      consentDuration: 'P2Y',
      jurisdiction: 'US',
      purposes: notice().purposes.map((p) => ({ ...p, basis: 'consent', takes_decision: true })),
    } as NoticeContentInput;
    expect(noticeFingerprint(withExtras)).toBe(noticeFingerprint(notice()));
    const terms = newsletterTerms();
    const other = normaliseFlowTerms({ ...NEWSLETTER_FLOW_BODY, consent_duration: 'P2Y', jurisdiction: 'US', retention: '13 months', name: 'Renamed' });
    expect(noticeFingerprint(noticeContentOf(other))).toBe(noticeFingerprint(noticeContentOf(terms)));
  });

  it("equals the domain's noticeFingerprint for a flow's full notice in its own locale", () => {
    const terms = newsletterTerms();
    expect(noticeFingerprint(noticeContentOf(terms))).toBe(domainNoticeFingerprint(terms));
    expect(noticeFingerprint(noticeContentOf(terms, { locale: 'de' }))).not.toBe(domainNoticeFingerprint(terms));
  });

  it('covers only the presented rows when a subset was shown', () => {
    const terms = newsletterTerms();
    const subset = noticeContentOf(terms, { presented: ['marketing_email', 'terms_of_service'] });
    expect(subset.purposes.map((p) => p.name)).toEqual(['marketing_email', 'terms_of_service']);
    expect(noticeFingerprint(subset)).not.toBe(noticeFingerprint(noticeContentOf(terms)));
  });

  it('refuses a purpose row listed twice', () => {
    const twice = { ...notice(), purposes: [...notice().purposes, notice().purposes[0]] };
    expect(() => noticeFingerprint(twice)).toThrow(DomainError);
  });
});

describe('privacyNotice', () => {
  it('is {reference, hash, url} with a content-addressed reference', () => {
    const result = privacyNotice({ flowId: FLOW_ID, ...notice() });
    const hash = noticeFingerprint(notice());
    expect(result).toEqual({ reference: `notice:${FLOW_ID}:${hash.slice(0, 16)}`, hash, url: 'https://acme.example/privacy' });
  });

  it('gives the same reference for the same content and a new one for any drift', () => {
    expect(privacyNotice({ flowId: FLOW_ID, ...notice() })).toEqual(privacyNotice({ flowId: FLOW_ID, ...notice(), purposes: [...notice().purposes].reverse() }));
    expect(privacyNotice({ flowId: FLOW_ID, ...notice(), title: 'New' }).reference).not.toBe(privacyNotice({ flowId: FLOW_ID, ...notice() }).reference);
  });

  it('carries url only when a policy URL is declared', () => {
    const result = privacyNotice({ flowId: FLOW_ID, ...notice(), policyUrl: null });
    expect(Object.keys(result).sort()).toEqual(['hash', 'reference']);
  });

  it('writes the policy URL as an RFC 3986 URI, which the schema asks, and fingerprints it as declared', () => {
    // Flows take URLs as browsers read them; the schema's `uri` format refused these, and the receipt
    // of every record of such a flow with them.
    const cases: Array<[string, string]> = [
      ['https://beispiel.de/datenschutzerklärung', 'https://beispiel.de/datenschutzerkl%C3%A4rung'],
      ['https://exämple.de/privacy', 'https://xn--exmple-cua.de/privacy'],
      ['https://acme.example/privacy|v2?range=[1,2]&q={a}#part|b#c', 'https://acme.example/privacy%7Cv2?range=%5B1,2%5D&q=%7Ba%7D#part%7Cb%23c'],
      ['https://acme.example/100%/privacy?x=%zz', 'https://acme.example/100%25/privacy?x=%25zz'],
    ];
    for (const [declared, written] of cases) {
      const result = privacyNotice({ flowId: FLOW_ID, ...notice(), policyUrl: declared });
      expect([declared, result.url]).toEqual([declared, written]);
      expect(result.hash).toBe(noticeFingerprint({ ...notice(), policyUrl: declared }));
      expect(uriOfUrl(written)).toBe(written);
    }
    // A URI already is kept byte for byte (no trailing slash added, no case changed).
    for (const uri of ['https://acme.example', 'https://Acme.Example/Privacy?a=b#c', 'http://localhost:8080/privacy%20policy']) expect(uriOfUrl(uri)).toBe(uri);
    expect(uriOfUrl(`https://acme.example/${'ä'.repeat(1000)}`)).toBeUndefined();
    expect(Object.keys(privacyNotice({ flowId: FLOW_ID, ...notice(), policyUrl: `https://acme.example/${'ä'.repeat(1000)}` })).sort()).toEqual(['hash', 'reference']);
  });
});

describe('NoticeMemo', () => {
  it("answers privacyNotice's notice for each flow, locale and set of presented purposes of the same terms", () => {
    const memo = new NoticeMemo();
    const terms = newsletterTerms();
    const ways = [{}, { locale: 'de' }, { presented: ['marketing_email', 'terms_of_service'] }, { presented: [] }, { locale: 'de', presented: ['terms_of_service'] }];
    for (let round = 0; round < 2; round++) {
      for (const options of ways) {
        expect(memo.of(FLOW_ID, terms, options)).toEqual(privacyNotice({ flowId: FLOW_ID, ...noticeContentOf(terms, options) }));
        expect(memo.of('flw_other', terms, options)).toEqual(privacyNotice({ flowId: 'flw_other', ...noticeContentOf(terms, options) }));
      }
    }
    const hashes = new Set(ways.map((options) => memo.of(FLOW_ID, terms, options).hash));
    expect(hashes.size).toBe(ways.length);
  });

  it('keeps notices by the terms object, and hands out a copy the caller may change', () => {
    const memo = new NoticeMemo();
    const terms = newsletterTerms();
    const first = memo.of(FLOW_ID, terms);
    first.hash = 'changed';
    expect(memo.of(FLOW_ID, terms).hash).toBe(privacyNotice({ flowId: FLOW_ID, ...noticeContentOf(terms) }).hash);
    const retitled = { ...newsletterTerms(), title: 'Another title' };
    expect(memo.of(FLOW_ID, retitled).hash).not.toBe(memo.of(FLOW_ID, terms).hash);
  });
});
