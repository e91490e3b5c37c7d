import { PersonRecordItem, RecordsPageError, renderRecordsPage } from './render-records';
import { renderInboxPage } from './render-inbox';

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

  it('says when a record was given, and when it was recorded only apart from that (imported history)', () => {
    const page = renderRecordsPage([item], { locale: 'en' });
    expect(page).toContain('<dt>Given</dt><dd><time datetime="2026-11-20T10:00:00.000Z"');
    expect(page).not.toContain('<dt>Recorded</dt>');
    const imported = renderRecordsPage([{ ...item, captured_at: '2019-03-01T09:00:00.000Z' }], { locale: 'en' });
    expect(imported).toContain('<dt>Given</dt><dd><time datetime="2019-03-01T09:00:00.000Z"');
    expect(imported).toContain('<dt>Recorded</dt><dd><time datetime="2026-11-20T10:00:00.000Z"');
  });

  it("shows one organisation's page with a link to every record, its forms coming back to it", () => {
    const page = renderRecordsPage([item], { locale: 'en', organisation: { id: 'tp_dev_0123456789abcdef', name: 'Acme' } });
    expect(page.match(/action="\/inbox\/records\/rec_us0123456789abcdefghij\/withdraw\?application_id=tp_dev_0123456789abcdef"/g)).toHaveLength(3);
    expect(page).toContain('id="records-all"');
    expect(page).toContain('id="records-organisation"');
    expect(renderRecordsPage([item], { locale: 'en' })).not.toContain('records-all');
  });

  it('offers a record listed as withdrawn whole (`withdrawal: whole`, which the service no longer gives, but the page still reads) one form for everything, also with one purpose given', () => {
    const page = renderRecordsPage([{ ...item, withdrawal: 'whole' as const }], { locale: 'en' });
    expect(page.match(/action="\/inbox\/records\/rec_us0123456789abcdefghij\/withdraw"/g)).toHaveLength(1);
    expect(page).not.toContain('name="purpose"');
    expect(page).toContain('Withdraw everything');
    const single = renderRecordsPage([{ ...item, withdrawal: 'whole' as const, purposes: { newsletter: item.purposes.newsletter } }], { locale: 'en' });
    expect(single.match(/<form[^>]*\/withdraw/g)).toHaveLength(1);
    expect(single).toContain('Withdraw everything');
  });

  it('offers no withdrawal on a record a newer one replaced, and says so', () => {
    const page = renderRecordsPage([{ ...item, superseded_by: 'rec_us9999999999999999999999' }], { locale: 'en' });
    expect(page).not.toContain('/withdraw');
    expect(page).toContain('data-superseded-by="rec_us9999999999999999999999"');
    expect(page).toContain('Replaced by a newer record');
  });

  it('offers on a replaced record a form for each purpose still given through it only (a newer flow version dropped it)', () => {
    const page = renderRecordsPage([{ ...item, superseded_by: 'rec_us9999999999999999999999', withdrawable: ['analytics'] }], { locale: 'en' });
    const forms = page.match(/<form[^>]*\/withdraw[^>]*>.*?<\/form>/gs) ?? [];
    expect(forms).toHaveLength(1);
    expect(forms[0]).toContain('name="purpose" value="analytics"');
  });

  it('confirms what a withdrawal withdrew, naming the record and the purpose, and speaks German', () => {
    const withdrawn = { ...item, purposes: { newsletter: { label: 'Newsletter', status: 'withdrawn' as const }, analytics: item.purposes.analytics } };
    const page = renderRecordsPage([withdrawn], { locale: 'de', confirmation: { record_id: item.record_id, purpose: 'newsletter' } });
    expect(page).toContain('id="records-confirmation"');
    expect(page).toContain('Ihr Widerruf von „Newsletter“ für „Newsletter &lt;b&gt;&amp;&lt;/b&gt; offers“ wurde erfasst');
    expect(page).toContain('Widerrufen');
    const everything = { ...item, purposes: { newsletter: { label: 'Newsletter', status: 'withdrawn' as const }, fraud: item.purposes.fraud } };
    expect(renderRecordsPage([everything], { locale: 'en', confirmation: { record_id: item.record_id } })).toContain(
      'Your withdrawal of everything you had given on “Newsletter &lt;b&gt;&amp;&lt;/b&gt; offers” was recorded',
    );
    expect(renderRecordsPage([], { locale: 'en' })).toContain('id="records-empty"');
  });

  it('confirms nothing the records do not show withdrawn: a link alone cannot fake it', () => {
    const confirmed = (items: PersonRecordItem[], confirmation: { record_id: string; purpose?: string }) => renderRecordsPage(items, { locale: 'en', confirmation }).includes('records-confirmation');
    const partly = { ...item, purposes: { newsletter: { label: 'Newsletter', status: 'withdrawn' as const }, analytics: item.purposes.analytics } };
    // A purpose still given, a record with something still given, a purpose it does not have, another record.
    expect(confirmed([item], { record_id: item.record_id, purpose: 'newsletter' })).toBe(false);
    expect(confirmed([partly], { record_id: item.record_id })).toBe(false);
    expect(confirmed([partly], { record_id: item.record_id, purpose: 'toString' })).toBe(false);
    expect(confirmed([partly], { record_id: 'rec_us9999999999999999999999', purpose: 'newsletter' })).toBe(false);
    // A record declined throughout was never withdrawn.
    expect(confirmed([{ ...item, purposes: { newsletter: { label: 'Newsletter', status: 'declined' } } }], { record_id: item.record_id })).toBe(false);
    expect(confirmed([partly], { record_id: item.record_id, purpose: 'newsletter' })).toBe(true);
  });

  it('says why a withdrawal was refused, in English and German', () => {
    const alert = (error: RecordsPageError, locale: string) => /<div id="records-error" class="hp-error" role="alert"><p>([^<]*)<\/p><\/div>/.exec(renderRecordsPage([item], { locale, error }))?.[1];
    expect(alert('conflict', 'en')).toMatch(/^Nothing was withdrawn: this is no longer given/);
    expect(alert('not_found', 'en')).toMatch(/^Nothing was withdrawn: this record was not found/);
    expect(alert('invalid', 'en')).toMatch(/^Nothing was withdrawn: the withdrawal did not name a purpose/);
    expect(alert('conflict', 'de')).toMatch(/^Nichts wurde widerrufen: Dies ist nicht mehr erteilt/);
    expect(alert('not_found', 'de')).toMatch(/^Nichts wurde widerrufen: Diese Einwilligung wurde/);
    expect(alert('invalid', 'de')).toMatch(/^Nichts wurde widerrufen: Der Widerruf nannte keinen Zweck/);
    expect(renderRecordsPage([item], { locale: 'en' })).not.toContain('records-error');
  });

  it('keeps the link that opened the page on its forms, so a withdrawal from it says so', () => {
    const page = renderRecordsPage([item], { locale: 'en', organisation: { id: 'tp_dev_0123456789abcdef' }, via: 'receipt' });
    expect(page.match(/action="\/inbox\/records\/rec_us0123456789abcdefghij\/withdraw\?application_id=tp_dev_0123456789abcdef&amp;via=receipt"/g)).toHaveLength(3);
  });

  it('offers signing out, as the inbox does', () => {
    for (const page of [renderRecordsPage([item], { locale: 'de' }), renderInboxPage([], { locale: 'de' })]) {
      expect(page).toContain('<form id="inbox-sign-out" class="hp-inline-form" method="post" action="/inbox/sign_out"><button type="submit" class="hp-button hp-button-secondary">Abmelden</button></form>');
    }
  });
});
