import { DEFAULT_ASSET_BASE } from './assets';
import { html, SafeHtml } from './html';
import { MessageKey, translator, Translator } from './i18n';
import { renderDocument } from './layout';
import { inboxSignOutForm } from './render-inbox-sign-in';

/** One consent record as the person's records page shows it. */
export interface PersonRecordItem {
  record_id: string;
  title: string;
  application_name?: string;
  /** When the person gave it (shown as given; the list is in that order). Absent: when it was recorded. */
  captured_at?: string;
  /** When the service recorded it: shown apart only when it is not when it was given (imported history). */
  recorded_at: string;
  /** A newer record of the same flow replaced this one: shown, but withdrawn through the newer one. */
  superseded_by?: string;
  /** On a replaced record, what is still given through it (no newer record holds it): a form each. */
  withdrawable?: readonly string[];
  /** `whole`: withdrawn all at once only (the service gave it for consents given on the hosted pages until they were withdrawn by purpose too); else purpose by purpose too. */
  withdrawal?: 'per_purpose' | 'whole';
  purposes: Record<string, { label: string; status: 'granted' | 'declined' | 'withdrawn' | 'expired' | 'objected' | 'noticed' }>;
}

/** Why a withdrawal made from the page was refused, as its alert says. */
export type RecordsPageError = 'conflict' | 'not_found' | 'invalid' | 'cross_site';

export interface RecordsPageOptions {
  locale?: string;
  assetBase?: string;
  /**
   * What a withdrawal just withdrew (post/redirect/get): a record, and the purpose when only one. The
   * confirmation names it, and only when the listed record shows it withdrawn (the link alone proves nothing).
   */
  confirmation?: { record_id: string; purpose?: string };
  /** A withdrawal that was refused: the alert shown at the top. */
  error?: RecordsPageError;
  /** The organisation the page shows (the receipt's link names it): its name, and a link to every organisation's records. */
  organisation?: { id: string; name?: string };
  /** Which link opened the page (`via` of the organisation's page: `receipt`, `email`): kept on its forms, so a withdrawal says so. */
  via?: string;
  /** The person's records with the organisation are kept in another country (its code): said instead of the list. */
  homeCountry?: string;
  /**
   * Which page of the records this is: the page size when the link asked for one (`limit`), the
   * cursor it was opened with (none: the newest records), and the next page's (none: the oldest
   * are shown). Kept on the page's links and forms, so a withdrawal comes back to this page.
   */
  paging?: { limit?: number; cursor?: string; nextCursor?: string | null };
}

/**
 * The query of a records page (with its `?`, or nothing): the organisation and the link that opened
 * it (`via`, only with an organisation), the page size when one was asked for, and the cursor of the page.
 */
export function recordsPageQuery(page: { organisation?: string; via?: string; limit?: number; cursor?: string }): string {
  const query = new URLSearchParams();
  if (page.organisation) {
    query.set('application_id', page.organisation);
    if (page.via) query.set('via', page.via);
  }
  if (page.limit !== undefined) query.set('limit', String(page.limit));
  if (page.cursor) query.set('cursor', page.cursor);
  const text = query.toString();
  return text ? `?${text}` : '';
}

/**
 * The confirmation of a withdrawal, checked against the records as they stand: a purpose is confirmed
 * when it reads withdrawn, a record when something on it reads withdrawn and nothing reads given.
 */
export function withdrawalConfirmation(items: readonly PersonRecordItem[], confirmation: RecordsPageOptions['confirmation'], tr: Translator): string | null {
  if (!confirmation) return null;
  const item = items.find((candidate) => candidate.record_id === confirmation.record_id);
  if (!item) return null;
  const statuses = Object.values(item.purposes).map((purpose) => purpose.status);
  if (confirmation.purpose === undefined) {
    return statuses.includes('withdrawn') && !statuses.includes('granted') ? tr.t('records_confirmation_record', { title: item.title }) : null;
  }
  const purpose = Object.prototype.hasOwnProperty.call(item.purposes, confirmation.purpose) ? item.purposes[confirmation.purpose] : undefined;
  return purpose?.status === 'withdrawn' ? tr.t('records_confirmation_purpose', { purpose: purpose.label, title: item.title }) : null;
}

const ERROR_MESSAGES: Record<RecordsPageError, MessageKey> = { conflict: 'records_error_conflict', not_found: 'records_error_not_found', invalid: 'records_error_invalid', cross_site: 'records_error_cross_site' };

/** One record; its forms post to `query` (the page's own), so the withdrawal comes back to this page. */
function record(item: PersonRecordItem, tr: Translator, query: string): SafeHtml {
  const action = `/inbox/records/${encodeURIComponent(item.record_id)}/withdraw${query}`;
  // A replaced record offers no withdrawal (the newer one speaks for the person now) but of what no
  // newer record holds (a newer flow version dropped it), one purpose at a time.
  const replaced = item.superseded_by !== undefined;
  const stillHere = new Set(item.withdrawable ?? []);
  const granted = replaced ? [] : Object.entries(item.purposes).filter(([, purpose]) => purpose.status === 'granted');
  const whole = item.withdrawal === 'whole';
  const givenAt = item.captured_at ?? item.recorded_at;
  const given = tr.dateTime(givenAt);
  // Imported history is recorded long after it was given: both are said then, else the one time.
  const recorded = tr.dateTime(item.recorded_at);
  return html`<li class="hp-inbox-item" data-record-id="${item.record_id}">
<h2 class="hp-inbox-title">${item.title}</h2>
<dl class="hp-facts hp-facts-inline">
${item.application_name ? html`<div class="hp-fact"><dt class="hp-visually-hidden">${tr.t('application_label')}</dt><dd>${tr.t('records_from', { application: item.application_name })}</dd></div>` : null}
${given ? html`<div class="hp-fact"><dt>${tr.t('records_given')}</dt><dd><time datetime="${givenAt}" data-local-time="datetime">${given}</time></dd></div>` : null}
${recorded && recorded !== given ? html`<div class="hp-fact"><dt>${tr.t('records_recorded')}</dt><dd><time datetime="${item.recorded_at}" data-local-time="datetime">${recorded}</time></dd></div>` : null}
</dl>
${replaced ? html`<p class="hp-notice" data-superseded-by="${item.superseded_by!}">${tr.t('records_superseded')}</p>` : null}
<h3 class="hp-visually-hidden">${tr.t('records_purposes')}</h3>
<ul class="hp-purposes">
${Object.entries(item.purposes).map(
  ([key, purpose]) => html`<li class="hp-purpose" data-purpose="${key}" data-status="${purpose.status}">
<span class="hp-purpose-label">${purpose.label}</span> <span class="hp-badge">${tr.t(`record_status_${purpose.status}` as MessageKey)}</span>
${purpose.status === 'granted' && (!replaced || stillHere.has(key)) && !whole
  ? html`<form class="hp-inline-form" method="post" action="${action}"><input type="hidden" name="purpose" value="${key}"><button type="submit" class="hp-button hp-button-secondary" aria-label="${tr.t('records_withdraw_purpose', { purpose: purpose.label })}">${tr.t('records_withdraw')}</button></form>`
  : null}
</li>`,
)}
</ul>
${granted.length > (whole ? 0 : 1) ? html`<form class="hp-inline-form" method="post" action="${action}"><button type="submit" class="hp-button">${tr.t('records_withdraw_all')}</button></form>` : null}
</li>`;
}

/** The person's consent records, with a withdrawal form for every purpose still given. */
export function renderRecordsPage(items: readonly PersonRecordItem[], options: RecordsPageOptions = {}): string {
  const tr = translator(options.locale);
  const confirmation = withdrawalConfirmation(items, options.confirmation, tr);
  const view = { organisation: options.organisation?.id, via: options.via, limit: options.paging?.limit };
  const here = recordsPageQuery({ ...view, cursor: options.paging?.cursor });
  // A link to the older records while there are more, and back to the newest from any later page.
  const newest = options.paging?.cursor ? html`<a id="records-newest" class="hp-button hp-button-secondary" rel="first" href="/inbox/records${recordsPageQuery(view)}">${tr.t('records_newest')}</a>` : null;
  const older = options.paging?.nextCursor
    ? html`<a id="records-older" class="hp-button hp-button-secondary" rel="next" href="/inbox/records${recordsPageQuery({ ...view, cursor: options.paging.nextCursor })}">${tr.t('records_older')}</a>`
    : null;
  return renderDocument({
    tr,
    title: tr.t('records_title'),
    mode: 'page',
    assetBase: options.assetBase ?? DEFAULT_ASSET_BASE,
    bodyClass: 'hp-inbox-page',
    main: html`<div id="records" class="hp-inbox">
<h1 id="page-title">${tr.t('records_title')}</h1>
${options.error ? html`<div id="records-error" class="hp-error" role="alert"><p>${tr.t(ERROR_MESSAGES[options.error])}</p></div>` : null}
${confirmation ? html`<p id="records-confirmation" class="hp-notice" role="status">${confirmation}</p>` : null}
<p>${tr.t('records_intro')}</p>
${options.organisation?.name ? html`<p id="records-organisation">${tr.t('records_from', { application: options.organisation.name })}</p>` : null}
${options.homeCountry
  ? html`<div id="records-error" class="hp-error" role="alert"><p>${tr.t('records_error_elsewhere', { application: options.organisation?.name ?? options.organisation?.id ?? '', country: options.homeCountry })}</p></div>`
  : items.length > 0
  ? html`<ol id="records-list" class="hp-inbox-list" aria-label="${tr.t('records_title')}">${items.map((item) => record(item, tr, here))}</ol>`
  : html`<p id="records-empty" class="hp-notice">${tr.t('records_empty')}</p>`}
${!options.homeCountry && (newest || older) ? html`<nav class="hp-pager" aria-label="${tr.t('records_pages')}">${newest} ${older}</nav>` : null}
${options.organisation ? html`<p><a id="records-all" class="hp-link" href="/inbox/records">${tr.t('records_all')}</a></p>` : null}
<p><a class="hp-link" href="/inbox">${tr.t('records_back')}</a></p>
${inboxSignOutForm(tr)}
</div>`,
    footer: html`<footer class="hp-footer"><p>${tr.t('footer_text_generic')}</p></footer>`,
  });
}
