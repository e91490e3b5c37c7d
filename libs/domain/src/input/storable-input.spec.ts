import { MAX_BODY_DEPTH, unstorableInputIssues } from './storable-input';

describe('unstorableInputIssues', () => {
  it('finds nothing in ordinary text, emoji and composed or combining characters included', () => {
    expect(unstorableInputIssues({ subject: { email: 'josé@bücher.de', external_id: 'crm-😀-e\u0301' }, decisions: { newsletter: { decision: 'granted' } }, list: ['a', 1, null, true] })).toEqual([]);
  });

  it('names every string or field name holding U+0000 or an unpaired surrogate by its path (an object\'s key after a dot, an array\'s index in brackets), in the body\'s order', () => {
    expect(
      unstorableInputIssues({
        subject: { email: 'ada@example.com', external_id: 'crm\u00004711' },
        decisions: { 'news\u0000letter': { decision: 'granted' }, analytics: { decision: '\ud800' } },
        records: [{ idempotency_key: 'ok' }, { idempotency_key: 'x\udc00' }],
      }),
    ).toEqual([
      { field: 'subject.external_id', reason: 'must not contain the character U+0000' },
      { field: 'decisions.news\u0000letter', reason: 'its name must not contain the character U+0000' },
      { field: 'decisions.analytics.decision', reason: 'must be well-formed Unicode (an unpaired surrogate is no character)' },
      { field: 'records[1].idempotency_key', reason: 'must be well-formed Unicode (an unpaired surrogate is no character)' },
    ]);
  });

  it('refuses an object or array nested deeper than MAX_BODY_DEPTH where it crosses the limit, without looking further in', () => {
    const nested = (levels: number, inner: unknown) => {
      let value = inner;
      for (let level = 0; level < levels; level++) value = { a: value };
      return value;
    };
    // The body is level 1: 64 levels, the innermost holding a string, are allowed.
    expect(unstorableInputIssues(nested(MAX_BODY_DEPTH - 1, []))).toEqual([]);
    expect(unstorableInputIssues(nested(MAX_BODY_DEPTH, 'leaf'))).toEqual([]);
    expect(unstorableInputIssues(nested(MAX_BODY_DEPTH, []))).toEqual([{ field: Array(MAX_BODY_DEPTH).fill('a').join('.'), reason: 'nests deeper than 64 levels' }]);
    // Arrays in arrays: each index in its own brackets.
    expect(unstorableInputIssues({ rows: [['ok', 'x\u0000']] })).toEqual([{ field: 'rows[0][1]', reason: 'must not contain the character U+0000' }]);
    expect(unstorableInputIssues({ list: [nested(100_000, 'bottom\u0000')] })).toEqual([
      { field: ['list[0]', ...Array(MAX_BODY_DEPTH - 2).fill('a')].join('.'), reason: 'nests deeper than 64 levels' },
    ]);
  });
});
