import { recordsPageUrl, recordsPageVia, withdrawalChannelOf, stillInForceOnReplaced } from './records-page';

describe('records page link', () => {
  it('names the organisation, and which link it is when told: the same for every receipt, with no credential in it', () => {
    expect(recordsPageUrl('https://us.example.com/', 'tp_live_0123456789abcdef')).toBe('https://us.example.com/inbox/records?application_id=tp_live_0123456789abcdef');
    expect(recordsPageUrl('https://us.example.com', 'tp_live_0123456789abcdef', 'receipt')).toBe('https://us.example.com/inbox/records?application_id=tp_live_0123456789abcdef&via=receipt');
    expect(recordsPageUrl('https://us.example.com', 'tp_live_0123456789abcdef', 'email')).toBe('https://us.example.com/inbox/records?application_id=tp_live_0123456789abcdef&via=email');
  });

  it('says the channel of a withdrawal made from the page the link opened, and ignores a via it does not know', () => {
    expect(withdrawalChannelOf(recordsPageVia('receipt'))).toBe('receipt_link');
    expect(withdrawalChannelOf(recordsPageVia('email'))).toBe('email_link');
    expect(withdrawalChannelOf(recordsPageVia(undefined))).toBe('own_records');
    for (const other of ['', 'mailing_tool', 'RECEIPT', ['receipt'], 1]) expect(withdrawalChannelOf(recordsPageVia(other))).toBe('own_records');
  });
});

describe('stillInForceOnReplaced', () => {
  it('keeps the granted purposes no newer record holds, whatever status the newer record gives the others', () => {
    const statuses = { newsletter: { status: 'granted' }, analytics: { status: 'granted' }, sms: { status: 'declined' }, fraud: { status: 'noticed' } };
    expect(stillInForceOnReplaced(statuses, ['newsletter', 'fraud'])).toEqual(['analytics']);
    // A newer record that declined it still speaks for it.
    expect(stillInForceOnReplaced(statuses, ['newsletter', 'analytics'])).toEqual([]);
  });
});
