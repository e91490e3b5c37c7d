import { encodeCursor } from '../paging/paging';
import { recordsPageAfter, recordsPageCursor, recordsPageList, recordsPagePosition, recordsPageUrl, recordsPageVia, withdrawalChannelOf, stillInForceOnReplaced } from './records-page';

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

describe('recordsPagePosition', () => {
  it('orders records by when the person gave them, not by when an import recorded them', () => {
    const newestFirst = (entries: Array<{ record_id: string; captured_at: string; recorded_at: string }>) =>
      [...entries]
        .sort((a, b) => {
          const [x, y] = [recordsPagePosition(a), recordsPagePosition(b)];
          const part = x.findIndex((value, i) => value !== y[i]);
          return part < 0 ? 0 : x[part] < y[part] ? 1 : -1;
        })
        .map((entry) => entry.record_id);
    const entries = [
      { record_id: 'rec_given_last', captured_at: '2026-11-20T10:00:00.000Z', recorded_at: '2026-11-20T10:00:01.000Z' },
      // History imported later: recorded after the consent given last.
      { record_id: 'rec_2019', captured_at: '2019-03-01T09:00:00.000Z', recorded_at: '2026-11-29T02:00:00.000Z' },
      { record_id: 'rec_2022', captured_at: '2022-07-01T09:00:00.000Z', recorded_at: '2026-11-29T02:00:00.001Z' },
      // Given at the same moment: the later recording first, then the greater id.
      { record_id: 'rec_same_b', captured_at: '2020-01-01T00:00:00.000Z', recorded_at: '2026-11-29T02:00:00.002Z' },
      { record_id: 'rec_same_a', captured_at: '2020-01-01T00:00:00.000Z', recorded_at: '2026-11-29T02:00:00.003Z' },
      { record_id: 'rec_same_c', captured_at: '2020-01-01T00:00:00.000Z', recorded_at: '2026-11-29T02:00:00.003Z' },
    ];
    expect(newestFirst(entries)).toEqual(['rec_given_last', 'rec_2022', 'rec_same_c', 'rec_same_a', 'rec_same_b', 'rec_2019']);
  });
});

describe('records page cursor', () => {
  const position: [string, string, string] = ['2020-01-01T00:00:00.000001Z', '2025-01-01T00:00:00.000000Z', `rec_us${'0'.repeat(20)}`];
  const refusal = { code: 'invalid_request', details: [{ field: 'cursor', reason: 'not a cursor of this list' }] };

  it('names the list and the position, and reads back only in that list', () => {
    const all = recordsPageCursor(recordsPageList(), position);
    expect(recordsPageAfter(all, recordsPageList())).toEqual(position);
    expect(recordsPageAfter(undefined, recordsPageList())).toBeUndefined();
    expect(() => recordsPageAfter(all, recordsPageList('tp_dev_0123456789abcdef'))).toThrow(expect.objectContaining(refusal));
    // Nothing of the person: two times and a record id, which the page itself shows.
    expect(JSON.parse(Buffer.from(all, 'base64url').toString())).toEqual({ list: 'inbox_records:*', after: position });
  });

  it('refuses a position changed by hand, by name, whatever it was changed to', () => {
    const list = recordsPageList();
    for (const after of [
      [position[0], position[1]],
      [position[0], position[1], position[2], 'x'],
      ["2020-01-01'); DROP TABLE x; --", position[1], position[2]],
      [position[0], '2025-13-45T99:00:00Z', position[2]],
      [position[0], position[1], 'sub_us0000'],
      [position[0], position[1], 7],
      'rec_us',
    ]) {
      expect(() => recordsPageAfter(encodeCursor({ list, after }), list)).toThrow(expect.objectContaining(refusal));
    }
    expect(() => recordsPageAfter('not a cursor', list)).toThrow(expect.objectContaining({ code: 'invalid_request', details: [{ field: 'cursor', reason: 'malformed cursor' }] }));
  });
});
