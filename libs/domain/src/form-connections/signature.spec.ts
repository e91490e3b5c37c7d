import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { countryOfFormConnectionId, isFormConnectionId, newFormConnectionId, newFormConnectionSecret } from './connection';
import { isTypeformSignatureForm, PREVIOUS_SECRET_GRACE_MS, typeformSignature, typeformSignatureRefusal, verifyTypeformSignature } from './signature';

const body = Buffer.from('{"event_id":"LtWXD3crgy","event_type":"form_response","form_response":{"form_id":"lT4Z3j"}}', 'utf8');
const now = new Date('2026-11-20T12:00:00.000Z');

describe('typeformSignature', () => {
  it('is sha256= and the base64 HMAC-SHA256 of the raw body under the secret, as Typeform documents', () => {
    const expected = 'sha256=' + createHmac('sha256', 'abc123').update(body).digest('base64');
    expect(typeformSignature('abc123', body)).toBe(expected);
    expect(typeformSignature('abc123', body.toString('utf8'))).toBe(expected);
    expect(() => typeformSignature('', body)).toThrow(RangeError);
  });
});

describe('verifyTypeformSignature', () => {
  const current = 'fcsec_current';
  const old = 'fcsec_previous';

  it('accepts the current secret and refuses anything else', () => {
    expect(verifyTypeformSignature(typeformSignature(current, body), body, { current }, now)).toBe('current');
    expect(verifyTypeformSignature(typeformSignature(old, body), body, { current }, now)).toBeNull();
    expect(verifyTypeformSignature(undefined, body, { current }, now)).toBeNull();
    expect(verifyTypeformSignature('', body, { current }, now)).toBeNull();
    expect(verifyTypeformSignature(['sha256=x'], body, { current }, now)).toBeNull();
    expect(verifyTypeformSignature(typeformSignature(current, body).replace('sha256=', 'sha1='), body, { current }, now)).toBeNull();
  });

  it('honours the previous secret for one day after the rotation, not a moment longer', () => {
    const signed = typeformSignature(old, body);
    const at = (ms: number) => ({ current, previous: { secret: old, rotatedAt: new Date(now.getTime() - ms) } });
    expect(verifyTypeformSignature(signed, body, at(0), now)).toBe('previous');
    expect(verifyTypeformSignature(signed, body, at(PREVIOUS_SECRET_GRACE_MS - 1), now)).toBe('previous');
    expect(verifyTypeformSignature(signed, body, at(PREVIOUS_SECRET_GRACE_MS), now)).toBeNull();
    expect(verifyTypeformSignature(typeformSignature(current, body), body, at(PREVIOUS_SECRET_GRACE_MS * 2), now)).toBe('current');
  });

  it('refuses every body that is not byte for byte the one signed', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 256 }), fc.nat(), fc.integer({ min: 1, max: 255 }), (bytes, at, flip) => {
        const raw = Buffer.from(bytes);
        const signature = typeformSignature(current, raw);
        expect(verifyTypeformSignature(signature, raw, { current }, now)).toBe('current');
        const altered = Buffer.from(raw);
        altered[at % altered.length] ^= flip;
        expect(verifyTypeformSignature(signature, altered, { current }, now)).toBeNull();
      }),
    );
  });
});

describe('form connection ids and secrets', () => {
  it('carries the home country in the id', () => {
    const id = newFormConnectionId('US');
    expect(id).toMatch(/^fcn_us[0-9a-z]{20}$/);
    expect(isFormConnectionId(id)).toBe(true);
    expect(countryOfFormConnectionId(id)).toBe('US');
    expect(countryOfFormConnectionId('fcn_US0123')).toBeUndefined();
    expect(() => newFormConnectionId('USA')).toThrow(RangeError);
  });

  it('makes distinct 256-bit secrets', () => {
    const a = newFormConnectionSecret();
    expect(a).toMatch(/^fcsec_[A-Za-z0-9_-]{43}$/);
    expect(newFormConnectionSecret()).not.toBe(a);
  });
});

describe('typeformSignatureRefusal', () => {
  const secret = 'fcsec_current';
  const hex = 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
  const base64 = createHmac('sha256', secret).update(body).digest('base64');

  it('tells a sender whose header is missing or not in Typeform\'s form what the form is, and one whose header is well-formed what to sign', () => {
    expect(typeformSignatureRefusal(undefined)).toMatch(/no Typeform-Signature header/);
    expect(typeformSignatureRefusal(hex)).toMatch(/hex.*base64/);
    expect(typeformSignatureRefusal(base64)).toMatch(/must start with sha256=/);
    expect(typeformSignatureRefusal('sha1=' + base64)).toMatch(/must start with sha256=/);
    expect(typeformSignatureRefusal('sha256=not base64')).toMatch(/not in Typeform's form: sha256=<base64 of the HMAC-SHA256 of the raw body/);
    // Well-formed and wrong: the secret or the bytes signed.
    expect(typeformSignatureRefusal(typeformSignature('fcsec_other', body))).toMatch(/does not match.*exact bytes.*whole secret/);
    expect(typeformSignatureRefusal(` ${typeformSignature('fcsec_other', body)} `)).toMatch(/does not match/);
  });
});

describe('isTypeformSignatureForm', () => {
  it("takes Typeform's form only: sha256= and the base64 of 32 bytes", () => {
    const good = typeformSignature('fcsec_secret', '{"a":1}');
    expect(isTypeformSignatureForm(good)).toBe(true);
    expect(isTypeformSignatureForm(` ${good} `)).toBe(true);
    for (const bad of [undefined, '', 'sha256=AAAA', `sha256=${'ab'.repeat(32)}`, good.slice('sha256='.length), `sha1=${good.slice(7)}`, `${good}x`, 7]) {
      expect([bad, isTypeformSignatureForm(bad)]).toEqual([bad, false]);
    }
  });
});
