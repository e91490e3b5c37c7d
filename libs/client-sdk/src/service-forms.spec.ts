import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { labelDigest } from '@dcr/domain';
import { captureRequestBody, labelText, sha256Hex } from './service-forms';

describe('captureRequestBody', () => {
  it('keeps each mapped control’s decision and presentation, nothing else', () => {
    const body = captureRequestBody(
      'flw_dev_0123456789abcdef',
      {
        newsletter: { checked: true, defaultChecked: false, required: false },
        analytics: { checked: false, defaultChecked: true, required: true },
      },
      { newsletter: 'a'.repeat(64) },
    );
    expect(body).toEqual({
      flow_id: 'flw_dev_0123456789abcdef',
      channel: 'form_capture',
      decisions: {
        newsletter: { decision: 'granted', default_checked: false, mandatory: false },
        analytics: { decision: 'declined', default_checked: true, mandatory: true },
      },
      labels: { newsletter: 'a'.repeat(64) },
    });
  });

  it('sends labels only when there are some, and the subject only with a browser commit', () => {
    const controls = { newsletter: { checked: false, defaultChecked: false, required: false } };
    expect(Object.keys(captureRequestBody('flw_dev_0123456789abcdef', controls, {}))).toEqual(['flow_id', 'channel', 'decisions']);
    expect(captureRequestBody('flw_dev_0123456789abcdef', controls, undefined, { email: 'ada@example.com' })).toMatchObject({ commit: true, subject: { email: 'ada@example.com' } });
  });

  it('never carries more than the controls it was given', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), fc.record({ checked: fc.boolean(), defaultChecked: fc.boolean(), required: fc.boolean() })), (controls) => {
        const body = captureRequestBody('flw_dev_0123456789abcdef', controls);
        expect(Object.keys(body.decisions).sort()).toEqual(Object.keys(controls).sort());
        for (const [key, control] of Object.entries(controls)) {
          expect(body.decisions[key]).toEqual({ decision: control.checked ? 'granted' : 'declined', default_checked: control.defaultChecked, mandatory: control.required });
        }
      }),
    );
  });
});

describe('label digests', () => {
  it('hash the label text, whitespace collapsed and trimmed, as the service hashes the published label', async () => {
    expect(labelText('\n   Monthly   newsletter\t ')).toBe('Monthly newsletter');
    for (const text of ['Newsletter', 'Nutzungsanalyse für Ä', '']) {
      expect(await sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
  });

  it('read a label in composed form, without the characters that show nothing', () => {
    expect(labelText('Nutzungsanalyse fu\u0308r A\u0308')).toBe('Nutzungsanalyse für Ä');
    expect(labelText('News\u00ADletter\u200B per\u2060 E-Mail\uFEFF')).toBe('Newsletter per E-Mail');
  });

  it('attest what the service computes for the same text, whatever the text (libs/domain labelDigest)', async () => {
    const pieces = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.constantFrom(' ', '\n', '\t', '\u00A0', '\u00AD', '\u200B', '\u2060', '\uFEFF', 'o\u0308', 'ö', 'A\u030A', 'Å', '\u212B'),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(pieces, { maxLength: 12 }), async (parts) => {
        const text = parts.join('');
        expect(await sha256Hex(labelText(text))).toBe(labelDigest(text));
      }),
    );
  });
});
