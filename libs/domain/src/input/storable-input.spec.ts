import { unstorableInputIssues } from './storable-input';

describe('unstorableInputIssues', () => {
  it('finds nothing in ordinary text, emoji and composed or combining characters included', () => {
    expect(unstorableInputIssues({ subject: { email: 'josé@bücher.de', external_id: 'crm-😀-e\u0301' }, decisions: { newsletter: { decision: 'granted' } }, list: ['a', 1, null, true] })).toEqual([]);
  });

  it('names every string or field name holding U+0000 or an unpaired surrogate by its dotted path, in the body\'s order', () => {
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
      { field: 'records.1.idempotency_key', reason: 'must be well-formed Unicode (an unpaired surrogate is no character)' },
    ]);
  });

  it('walks a body nested far deeper than the stack would allow a recursion', () => {
    let deep: unknown = 'bottom\u0000';
    for (let level = 0; level < 100_000; level++) deep = { a: deep };
    const issues = unstorableInputIssues(deep);
    expect(issues).toHaveLength(1);
    expect(issues[0].field.split('.')).toHaveLength(100_000);
  });
});
