import { renderRecordsPage } from './render-records';

describe('the records page', () => {
  const item = {
    record_id: 'rec_us0123456789abcdefghij',
    title: 'Newsletter <b>&</b> offers',
    application_name: 'Acme',
    recorded_at: '2026-11-20T10:00:00.000Z',
    purposes: {
      newsletter: { label: 'Newsletter', status: 'granted' as const },
      analytics: { label: 'Analytics', status: 'granted' as const },
      fraud: { label: 'Fraud prevention', status: 'objected' as const },
    },
  };

  it('lists each record with a withdrawal form per purpose still given, and one for everything', () => {
    const page = renderRecordsPage([item], { locale: 'en' });
    expect(page).toContain('data-record-id="rec_us0123456789abcdefghij"');
    expect(page).toContain('Newsletter &lt;b&gt;&amp;&lt;/b&gt; offers');
    expect(page.match(/action="\/inbox\/records\/rec_us0123456789abcdefghij\/withdraw"/g)).toHaveLength(3);
    expect(page).toContain('<input type="hidden" name="purpose" value="newsletter">');
    expect(page).not.toContain('value="fraud"');
    expect(page).toContain('Withdraw everything');
    expect(page).toContain('From Acme');
    expect(page).not.toContain('records-confirmation');
  });

  it("shows one organisation's page with a link to every record, its forms coming back to it", () => {
    const page = renderRecordsPage([item], { locale: 'en', organisation: { id: 'tp_dev_0123456789abcdef', name: 'Acme' } });
    expect(page.match(/action="\/inbox\/records\/rec_us0123456789abcdefghij\/withdraw\?application_id=tp_dev_0123456789abcdef"/g)).toHaveLength(3);
    expect(page).toContain('id="records-all"');
    expect(page).toContain('id="records-organisation"');
    expect(renderRecordsPage([item], { locale: 'en' })).not.toContain('records-all');
  });

  it('offers a record withdrawn whole (a consent given on the hosted pages) one form for everything, also with one purpose given', () => {
    const page = renderRecordsPage([{ ...item, withdrawal: 'whole' as const }], { locale: 'en' });
    expect(page.match(/action="\/inbox\/records\/rec_us0123456789abcdefghij\/withdraw"/g)).toHaveLength(1);
    expect(page).not.toContain('name="purpose"');
    expect(page).toContain('Withdraw everything');
    const single = renderRecordsPage([{ ...item, withdrawal: 'whole' as const, purposes: { newsletter: item.purposes.newsletter } }], { locale: 'en' });
    expect(single.match(/<form/g)).toHaveLength(1);
    expect(single).toContain('Withdraw everything');
  });

  it('offers no withdrawal on a record a newer one replaced, and says so', () => {
    const page = renderRecordsPage([{ ...item, superseded_by: 'rec_us9999999999999999999999' }], { locale: 'en' });
    expect(page).not.toContain('<form');
    expect(page).toContain('data-superseded-by="rec_us9999999999999999999999"');
    expect(page).toContain('Replaced by a newer record');
  });

  it('shows the confirmation after a withdrawal, and speaks German', () => {
    const page = renderRecordsPage([{ ...item, purposes: { newsletter: { label: 'Newsletter', status: 'withdrawn' } } }], { locale: 'de', confirmation: true });
    expect(page).toContain('id="records-confirmation"');
    expect(page).toContain('Ihr Widerruf wurde erfasst');
    expect(page).toContain('Widerrufen');
    expect(page).not.toContain('<form');
    expect(renderRecordsPage([], { locale: 'en' })).toContain('id="records-empty"');
  });
});
