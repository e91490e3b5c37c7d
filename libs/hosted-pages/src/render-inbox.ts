import { DEFAULT_ASSET_BASE } from './assets';
import { html, raw, SafeHtml } from './html';
import { MessageKey, translator, Translator } from './i18n';
import { renderDocument } from './layout';
import { inboxSignOutForm } from './render-inbox-sign-in';
import { InboxItem } from './view';

export const INBOX_TRIGGERS = ['scope', 'action', 'value', 'time', 'escalation', 'reputation'] as const;
export type InboxSort = 'deadline' | 'newest';

export interface InboxPageOptions {
  locale?: string;
  assetBase?: string;
  /** Path of the inbox page (the filter form's action and the next-page link), default `/inbox`. */
  basePath?: string;
  /** Prefix of the decision pages, default `/decisions/`. */
  decisionPath?: string;
  /** The current filters (echoed into the form and the next-page link). */
  filters?: { kind?: string | null; trigger?: string | null; application_id?: string | null; limit?: number | string | null };
  sort?: InboxSort;
  /** `next_cursor` of the list answer; renders the next-page link. */
  nextCursor?: string | null;
}

function query(params: Record<string, string | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

function option(value: string, label: string, selected: boolean): SafeHtml {
  return html`<option value="${value}"${selected ? raw(' selected') : null}>${label}</option>`;
}

function row(item: InboxItem, tr: Translator, decisionPath: string): SafeHtml {
  const application = item.application?.name ?? item.application_name ?? '';
  // A request without a deadline of its own ends when it expires: that is when it must be decided by.
  const decideBy = item.deadline_at ?? item.expires_at ?? null;
  const deadline = tr.dateTime(decideBy);
  const received = tr.dateTime(item.created_at ?? null);
  const href = `${decisionPath}${encodeURIComponent(item.session_token)}`;
  const triggerKey = item.trigger && (INBOX_TRIGGERS as readonly string[]).includes(item.trigger) ? (`trigger_option_${item.trigger}` as MessageKey) : null;
  return html`<li class="hp-inbox-item" data-session-token="${item.session_token}" data-kind="${item.kind}">
<p class="hp-eyebrow">${tr.t(item.kind === 'approval' ? 'kind_approval' : 'kind_consent')}</p>
<h2 class="hp-inbox-title"><a class="hp-link inbox-link" href="${href}">${item.title || tr.t(item.kind === 'approval' ? 'kind_approval' : 'kind_consent')}</a></h2>
<dl class="hp-facts hp-facts-inline">
${application ? html`<div class="hp-fact"><dt class="hp-visually-hidden">${tr.t('application_label')}</dt><dd>${tr.t('inbox_from', { application })}</dd></div>` : null}
<div class="hp-fact"><dt>${tr.t('inbox_deadline')}</dt><dd>${deadline ? html`<time datetime="${new Date(decideBy as string).toISOString()}" data-local-time="datetime">${deadline}</time>` : tr.t('inbox_no_deadline')}</dd></div>
${received ? html`<div class="hp-fact"><dt>${tr.t('inbox_received')}</dt><dd><time datetime="${new Date(item.created_at as string).toISOString()}" data-local-time="datetime">${received}</time></dd></div>` : null}
${item.kind === 'approval' && item.trigger ? html`<div class="hp-fact"><dt>${tr.t('inbox_trigger')}</dt><dd>${triggerKey ? tr.t(triggerKey) : item.trigger}</dd></div>` : null}
</dl>
</li>`;
}

/** The unified inbox: pending consent and approval requests of one person. */
export function renderInboxPage(items: readonly InboxItem[], options: InboxPageOptions = {}): string {
  const tr = translator(options.locale);
  const basePath = options.basePath ?? '/inbox';
  const decisionPath = options.decisionPath ?? '/decisions/';
  const filters = options.filters ?? {};
  const kind = filters.kind === 'consent' || filters.kind === 'approval' ? filters.kind : '';
  const trigger = filters.trigger && (INBOX_TRIGGERS as readonly string[]).includes(filters.trigger) ? filters.trigger : '';
  const sort: InboxSort = options.sort === 'newest' ? 'newest' : 'deadline';
  const filtered = Boolean(kind || trigger || filters.application_id);

  const form = html`<form id="inbox-filters" class="hp-form hp-filters" method="get" action="${basePath}" aria-labelledby="inbox-filters-title">
<h2 id="inbox-filters-title" class="hp-visually-hidden">${tr.t('inbox_filters')}</h2>
${filters.application_id ? html`<input type="hidden" name="application_id" value="${filters.application_id}">` : null}
<div class="hp-field">
<label for="filter-kind" class="hp-label">${tr.t('filter_kind')}</label>
<select id="filter-kind" name="kind" class="hp-input">
${option('', tr.t('filter_kind_all'), kind === '')}
${option('consent', tr.t('kind_consent'), kind === 'consent')}
${option('approval', tr.t('kind_approval'), kind === 'approval')}
</select>
</div>
<div class="hp-field">
<label for="filter-trigger" class="hp-label">${tr.t('filter_trigger')}</label>
<select id="filter-trigger" name="trigger" class="hp-input">
${option('', tr.t('filter_trigger_all'), trigger === '')}
${INBOX_TRIGGERS.map((t) => option(t, tr.t(`trigger_option_${t}` as MessageKey), trigger === t))}
</select>
</div>
<div class="hp-field">
<label for="sort" class="hp-label">${tr.t('sort_label')}</label>
<select id="sort" name="sort" class="hp-input">
${option('deadline', tr.t('sort_deadline'), sort === 'deadline')}
${option('newest', tr.t('sort_newest'), sort === 'newest')}
</select>
</div>
<div class="hp-actions"><button type="submit" id="filters-apply" class="hp-button hp-button-secondary">${tr.t('apply_filters')}</button></div>
</form>`;

  const list =
    items.length > 0
      ? html`<ol id="inbox-list" class="hp-inbox-list" aria-label="${tr.t('inbox_results')}">
${items.map((item) => row(item, tr, decisionPath))}
</ol>`
      : html`<p id="inbox-empty" class="hp-notice">${tr.t(filtered ? 'inbox_empty_filtered' : 'inbox_empty')}</p>`;

  const next = options.nextCursor
    ? html`<nav class="hp-pager" aria-label="${tr.t('inbox_next')}"><a id="inbox-next" class="hp-button hp-button-secondary" rel="next" href="${basePath}${query({
        kind,
        trigger,
        application_id: filters.application_id ?? null,
        sort,
        limit: filters.limit !== undefined && filters.limit !== null ? String(filters.limit) : null,
        cursor: options.nextCursor,
      })}">${tr.t('inbox_next')}</a></nav>`
    : null;

  return renderDocument({
    tr,
    title: tr.t('inbox_title'),
    mode: 'page',
    assetBase: options.assetBase ?? DEFAULT_ASSET_BASE,
    bodyClass: 'hp-inbox-page',
    main: html`<div id="inbox" class="hp-inbox">
<h1 id="page-title">${tr.t('inbox_title')}</h1>
<p><a id="inbox-records-link" class="hp-link" href="/inbox/records">${tr.t('inbox_records_link')}</a></p>
${form}
${list}
${next}
${inboxSignOutForm(tr)}
</div>`,
    footer: html`<footer class="hp-footer"><p>${tr.t('footer_text_generic')}</p></footer>`,
  });
}
