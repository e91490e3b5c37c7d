import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { DomainError } from '../errors';
import { newSubjectId } from '../identifiers';
import { claimPrecedes, emailProblem, externalIdProblem, HomeClaim, homeOfSubject, inboxAddressDigest, isCountryCode, normaliseCountry, normaliseEmail, normaliseExternalId, subjectReference, SubjectReferenceKind, subjectTextProblem } from './residency';

const KEY = 'k'.repeat(32);
const APP = 'tp_dev_0123456789abcdef';
const kind = fc.constantFrom<SubjectReferenceKind>('external_id', 'email', 'subject_id');

describe('subjectReference', () => {
  it('is the hex HMAC-SHA256 of the documented encoding', () => {
    const expected = createHmac('sha256', KEY)
      .update(JSON.stringify(['dcr.subject-reference.v1', APP, 'email', 'ada@example.com']))
      .digest('hex');
    expect(subjectReference(KEY, APP, 'email', 'ada@example.com')).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('never contains the value it refers to', () => {
    expect(subjectReference(KEY, APP, 'email', 'ada@example.com')).not.toContain('ada');
  });

  it('treats e-mail addresses case- and padding-insensitively', () => {
    const ref = subjectReference(KEY, APP, 'email', 'ada@example.com');
    expect(subjectReference(KEY, APP, 'email', '  Ada@EXAMPLE.com\n')).toBe(ref);
  });

  it('treats an address written in two Unicode forms, or its domain in Unicode and in ASCII, as one', () => {
    // é precomposed and as e plus a combining accent; a domain as written and as the DNS spells it.
    expect(subjectReference(KEY, APP, 'email', 'jose\u0301@example.com')).toBe(subjectReference(KEY, APP, 'email', 'jos\u00e9@example.com'));
    expect(subjectReference(KEY, APP, 'email', 'idn@B\u00fccher.de')).toBe(subjectReference(KEY, APP, 'email', 'idn@xn--bcher-kva.de'));
    expect(normaliseEmail('Jose\u0301@B\u00fcCHER.de')).toBe('jos\u00e9@xn--bcher-kva.de');
    // A domain IDNA refuses is kept as written (the address is refused earlier, or is no one's).
    expect(normaliseEmail('ada@exa\u00admple\u2028.com')).toBe('ada@exa\u00admple\u2028.com');
  });

  it('normalises e-mail addresses idempotently', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (local, domain) => {
      const once = normaliseEmail(`${local}@${domain}`);
      expect(normaliseEmail(once)).toBe(once);
    }));
  });

  it('keeps external ids and subject ids exact', () => {
    expect(subjectReference(KEY, APP, 'external_id', 'User-1')).not.toBe(subjectReference(KEY, APP, 'external_id', 'user-1'));
    expect(subjectReference(KEY, APP, 'external_id', 'u1 ')).not.toBe(subjectReference(KEY, APP, 'external_id', 'u1'));
  });

  it('separates applications, kinds and keys', () => {
    const ref = subjectReference(KEY, APP, 'external_id', 'u1');
    expect(subjectReference(KEY, 'tp_dev_fedcba9876543210', 'external_id', 'u1')).not.toBe(ref);
    expect(subjectReference(KEY, APP, 'subject_id', 'u1')).not.toBe(ref);
    expect(subjectReference('j'.repeat(32), APP, 'external_id', 'u1')).not.toBe(ref);
  });

  it('is unambiguous: shifting characters between fields changes the reference', () => {
    // A naive `${app}:${kind}:${value}` encoding would make these two collide.
    expect(subjectReference(KEY, 'a:external_id', 'external_id', 'b')).not.toBe(subjectReference(KEY, 'a', 'external_id', 'external_id:b'));
  });

  it('is injective in (application, kind, normalised value)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), kind, kind, fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (appA, appB, kindA, kindB, a, b) => {
        fc.pre(a.trim() !== '' && b.trim() !== '');
        const norm = (k: SubjectReferenceKind, v: string) => (k === 'email' ? v.trim().toLowerCase() : v);
        const same = appA === appB && kindA === kindB && norm(kindA, a) === norm(kindB, b);
        expect(subjectReference(KEY, appA, kindA, a) === subjectReference(KEY, appB, kindB, b)).toBe(same);
      }),
    );
  });

  it('refuses an empty value with a validation error naming the field', () => {
    for (const [k, field] of [
      ['email', 'subject.email'],
      ['external_id', 'subject.external_id'],
      ['subject_id', 'subject.id'],
    ] as const) {
      let thrown: unknown;
      try {
        subjectReference(KEY, APP, k, k === 'email' ? '   ' : '');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(DomainError);
      expect((thrown as DomainError).code).toBe('validation_failed');
      expect((thrown as DomainError).details).toEqual([{ field, reason: 'must be a non-empty string' }]);
    }
  });

  it('refuses a short key, a missing application id and an unknown kind', () => {
    expect(() => subjectReference('short', APP, 'email', 'a@b.c')).toThrow(RangeError);
    expect(() => subjectReference(KEY, '', 'email', 'a@b.c')).toThrow(RangeError);
    expect(() => subjectReference(KEY, APP, 'phone' as never, '123')).toThrow(RangeError);
  });
});

describe('country codes', () => {
  it.each(['US', 'DE', 'ZZ'])('accepts %s', (code) => expect(isCountryCode(code)).toBe(true));
  it.each(['us', 'USA', 'U', '', 'U1', ' US', 'Ü S', undefined, 42])('refuses %j', (code) => expect(isCountryCode(code)).toBe(false));

  it('normalises case and padding, and refuses what is not two letters', () => {
    expect(normaliseCountry('us')).toBe('US');
    expect(normaliseCountry(' De ')).toBe('DE');
    expect(normaliseCountry('deu')).toBeUndefined();
    expect(normaliseCountry('')).toBeUndefined();
    expect(normaliseCountry(null)).toBeUndefined();
    fc.assert(
      fc.property(fc.string(), (s) => {
        const n = normaliseCountry(s);
        if (n !== undefined) {
          expect(isCountryCode(n)).toBe(true);
          expect(normaliseCountry(n)).toBe(n);
        }
      }),
    );
  });
});

describe('homeOfSubject', () => {
  const deployment = ['US', 'DE'];

  it("answers the directory's entry first, whatever the address", () => {
    expect(homeOfSubject('DE', 'email', 'ada@example.com', deployment)).toBe('DE');
    // An id made before ids named their country, whose characters read as US: its entry says DE.
    expect(homeOfSubject('DE', 'subject_id', `sub_us${'0'.repeat(18)}`, deployment)).toBe('DE');
  });

  it("answers, without an entry, the country a person's id names when the deployment has it", () => {
    expect(homeOfSubject(undefined, 'subject_id', newSubjectId('DE'), deployment)).toBe('DE');
    expect(homeOfSubject(undefined, 'subject_id', newSubjectId('US'), deployment)).toBe('US');
    expect(homeOfSubject(undefined, 'subject_id', newSubjectId('FR'), deployment)).toBeUndefined();
    expect(homeOfSubject(undefined, 'subject_id', 'sub_0123456789abcdefghij', deployment)).toBeUndefined();
    // Only a person's id names a country: an e-mail address or external id without an entry is unknown.
    expect(homeOfSubject(undefined, 'external_id', `sub_de${'a'.repeat(18)}`, deployment)).toBeUndefined();
    expect(homeOfSubject(undefined, 'email', 'de@example.com', deployment)).toBeUndefined();
  });
});

describe('claimPrecedes', () => {
  const claim = fc.record({ homeCountry: fc.constantFrom('DE', 'FR', 'US'), recordedAt: fc.integer({ min: 0, max: 5 }).map((ms) => new Date(Date.UTC(2026, 10, 25) + ms)) });
  const same = (a: HomeClaim, b: HomeClaim) => a.homeCountry === b.homeCountry && a.recordedAt.getTime() === b.recordedAt.getTime();

  it('keeps the earlier claim, and of two at the same moment the lower country code', () => {
    const at = (ms: number) => new Date(Date.UTC(2026, 10, 25) + ms);
    expect(claimPrecedes({ homeCountry: 'US', recordedAt: at(1) }, { homeCountry: 'DE', recordedAt: at(2) })).toBe(true);
    expect(claimPrecedes({ homeCountry: 'US', recordedAt: at(1) }, { homeCountry: 'DE', recordedAt: at(1) })).toBe(false);
    expect(claimPrecedes({ homeCountry: 'DE', recordedAt: at(1) }, { homeCountry: 'US', recordedAt: at(1) })).toBe(true);
  });

  it('orders any two different claims one way only, whichever country compares them', () => {
    fc.assert(
      fc.property(claim, claim, (a, b) => {
        expect(claimPrecedes(a, a)).toBe(false);
        if (!same(a, b)) expect(claimPrecedes(a, b)).toBe(!claimPrecedes(b, a));
      }),
    );
  });

  it('is transitive, so the earliest of many claims precedes every other', () => {
    fc.assert(
      fc.property(claim, claim, claim, (a, b, c) => {
        if (claimPrecedes(a, b) && claimPrecedes(b, c)) expect(claimPrecedes(a, c)).toBe(true);
      }),
    );
  });
});

describe('inboxAddressDigest', () => {
  const key = 'k'.repeat(32);

  it('is the same for the address however it is typed, differs by address and key, and is not the address', () => {
    const digest = inboxAddressDigest(key, 'Ada@Example.com ');
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(inboxAddressDigest(key, 'ada@example.com')).toBe(digest);
    expect(inboxAddressDigest(key, 'grace@example.com')).not.toBe(digest);
    expect(inboxAddressDigest('m'.repeat(32), 'ada@example.com')).not.toBe(digest);
  });
});

describe('subjectTextProblem', () => {
  it('takes any Unicode text without control characters', () => {
    for (const value of ['ada@example.com', 'josé@bücher.de', 'crm-4711', 'emoji 😀 id', 'a\u200bb']) expect(subjectTextProblem(value)).toBeUndefined();
  });

  it('names a control character (a NUL cannot be stored) and an unpaired surrogate (not text)', () => {
    for (const value of ['crm-\u0000', 'a\tb', '\u007f', 'x\u0085']) expect(subjectTextProblem(value)).toBe('must not contain control characters');
    for (const value of ['\ud800', 'crm-\udc00', '\ude00😀']) expect(subjectTextProblem(value)).toBe('must be Unicode text (it holds an unpaired surrogate)');
  });
});

describe('externalIdProblem', () => {
  it('takes up to 200 characters (code points, as JSON Schema counts them) without the spaces around it', () => {
    // 150 emoji are 300 UTF-16 code units but 150 characters: every entry point takes them alike.
    for (const value of ['crm-4711', '😀'.repeat(150), 'x'.repeat(200), ` ${'x'.repeat(199)}  `, '\u00a0crm\u00a0', 'jose\u0301']) expect(externalIdProblem(value)).toBeUndefined();
    expect(normaliseExternalId(` ${'x'.repeat(199)}  `)).toBe('x'.repeat(199));
    expect(normaliseExternalId('\u00a0crm\u00a0')).toBe('crm');
  });

  it('names what cannot be an external id: empty, spaces only, too long, a control character, an unpaired surrogate', () => {
    expect(externalIdProblem('')).toBe('must not be blank');
    expect(externalIdProblem('   ')).toBe('must not be blank');
    expect(externalIdProblem('x'.repeat(201))).toBe('must be at most 200 characters (without the spaces around it)');
    expect(externalIdProblem('😀'.repeat(201))).toBe('must be at most 200 characters (without the spaces around it)');
    // A control character is refused even where trimming would drop it: the id given is not kept as given.
    for (const value of ['a\tb', '\tcrm', 'crm\u0000']) expect(externalIdProblem(value)).toBe('must not contain control characters');
    expect(externalIdProblem('crm\ud800')).toBe('must be Unicode text (it holds an unpaired surrogate)');
    expect(externalIdProblem(42)).toBe('must be a string');
  });
});

describe('emailProblem', () => {
  // The shape check is the caller's (validator.js's isEmail at the service's entry points); here a stand-in.
  const shaped = (value: string) => /^[^@\s]+@[^@\s]+\.[a-z]+$/.test(value);
  const local64 = 'a'.repeat(64);
  const at254 = `${local64}@${'d'.repeat(185)}.com`;

  it('takes an address of at most 254 characters with at most 64 bytes before the @', () => {
    expect(at254.length).toBe(254);
    for (const value of ['ada@example.com', `${local64}@example.com`, at254]) expect(emailProblem(value, shaped)).toBeUndefined();
  });

  it('names the limit an address is over, before its shape', () => {
    expect(emailProblem(`${'a'.repeat(65)}@example.com`, shaped)).toBe('must have at most 64 bytes before the @ (an e-mail address limit)');
    // Bytes as UTF-8 counts them: 33 two-byte letters are 66 bytes.
    expect(emailProblem(`${'é'.repeat(33)}@example.com`, shaped)).toBe('must have at most 64 bytes before the @ (an e-mail address limit)');
    expect(emailProblem(`${local64}@${'d'.repeat(186)}.com`, shaped)).toBe('must be at most 254 characters (an e-mail address limit)');
    expect(emailProblem(`x@${'d'.repeat(316)}.com`, shaped)).toBe('must be at most 254 characters (an e-mail address limit)');
  });

  it('names what is not an address: not a string, a control character, an unpaired surrogate, a bad shape', () => {
    expect(emailProblem(42, shaped)).toBe('must be an e-mail address');
    expect(emailProblem('ada@example\u0000.com', shaped)).toBe('must not contain control characters');
    expect(emailProblem('ada\ud800@example.com', shaped)).toBe('must be Unicode text (it holds an unpaired surrogate)');
    expect(emailProblem('not-an-address', shaped)).toBe('must be an e-mail address');
    expect(emailProblem(' ada@example.com', shaped)).toBe('must be an e-mail address');
  });
});
