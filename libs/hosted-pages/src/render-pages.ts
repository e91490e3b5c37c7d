import { DEFAULT_ASSET_BASE } from './assets';
import { html, safeUrl, SafeHtml } from './html';
import { MessageKey, translator, Translator } from './i18n';
import { renderDocument } from './layout';

export interface SimplePageOptions {
  assetBase?: string;
  mode?: 'page' | 'embed';
}

export interface ErrorPageInput extends SimplePageOptions {
  /** HTTP status (404, 410, 421, 500, …); selects default wording. */
  status: number;
  /** Overrides the default title of the status. */
  title?: string;
  /** Overrides the default message of the status. */
  message?: string;
  locale?: string;
  /** 421: the person's home country (ISO 3166-1 alpha-2). */
  homeCountry?: string;
  /** 421: where to continue (the home country's page), `http(s)` only. */
  homeUrl?: string;
  /** What of the request was refused (a 4xx's `details`): each field named, with why. */
  details?: ReadonlyArray<{ field: string; reason: string }>;
  /** Shown as a reference for support. */
  requestId?: string;
}

/** A page saying one thing: a title, what happened, maybe a way on (the pages of this library). */
export function messagePage(tr: Translator, options: SimplePageOptions, id: string, title: string, body: SafeHtml, attributes: SafeHtml | null = null): string {
  const mode = options.mode === 'embed' ? 'embed' : 'page';
  return renderDocument({
    tr,
    title,
    mode,
    assetBase: options.assetBase ?? DEFAULT_ASSET_BASE,
    bodyClass: 'hp-message-page',
    main: html`<div id="${id}" class="hp-message"${attributes}>
<h1 id="page-title">${title}</h1>
${body}
</div>`,
    footer: mode === 'page' ? html`<footer class="hp-footer"><p>${tr.t('footer_text_generic')}</p></footer>` : null,
  });
}

/** The hosted flow page of a flow that is not active (draft, withdrawn). */
export function renderFlowUnavailablePage(locale?: string | null, options: SimplePageOptions = {}): string {
  const tr = translator(locale);
  return messagePage(tr, options, 'flow-unavailable', tr.t('flow_unavailable_title'), html`<p id="page-message">${tr.t('flow_unavailable_message')}</p>`);
}

/**
 * The hosted flow page (`GET /accord/<flow_id>`): it opens nothing itself, so that a link scanner or a
 * prefetch leaves no session behind. The form POSTs to the same address (`action`), which opens the
 * session; the page's script sends it at once (the decision page then takes this page's place in the
 * history), and without a script the person presses the button.
 */
export function renderFlowOpenPage(locale: string | null | undefined, input: SimplePageOptions & { action: string }): string {
  const tr = translator(locale);
  return messagePage(
    tr,
    input,
    'flow-open',
    tr.t('flow_open_title'),
    html`<form id="flow-open-form" method="post" action="${input.action}" data-auto-submit="true">
<p id="page-message">${tr.t('flow_open_message')}</p>
<p><button id="flow-open-button" class="hp-button hp-button-primary" type="submit">${tr.t('flow_open_button')}</button></p>
</form>`,
  );
}

const KNOWN_STATUSES = new Set([404, 410, 421, 500]);

/** An error page: 404, 410, 421 (continue in the home country) and others. */
export function renderErrorPage(input: ErrorPageInput): string {
  const tr = translator(input.locale);
  const status = Number.isInteger(input.status) ? input.status : 500;
  const known = KNOWN_STATUSES.has(status) ? status : status >= 500 ? 500 : null;
  const country = input.homeCountry && /^[A-Za-z]{2}$/.test(input.homeCountry) ? input.homeCountry.toUpperCase() : null;
  const vars = { country: country ? tr.region(country) : '', country_code: country ?? '' };
  const title = input.title ?? tr.t(known ? (`error_${known}_title` as MessageKey) : 'error_generic_title');
  let message = input.message;
  if (message === undefined) {
    message = status === 421 && !country ? tr.t('error_wrong_country') : tr.t(known ? (`error_${known}_message` as MessageKey) : 'error_generic_message', vars);
  }
  const homeUrl = safeUrl(input.homeUrl);
  const body = html`<p id="error-status" class="hp-eyebrow">${tr.t('error_status_label', { status })}</p>
<p id="page-message">${message}</p>
${input.details && input.details.length > 0
    ? html`<ul id="error-details">${input.details.map((issue) => html`<li>${issue.field ? html`<code>${issue.field}</code>: ` : null}${issue.reason}</li>`)}</ul>`
    : null}
${homeUrl ? html`<p><a id="home-link" class="hp-button hp-button-primary" href="${homeUrl}">${tr.t('error_421_link', { country: vars.country || country || '' })}</a></p>` : null}
${input.requestId ? html`<p id="error-reference" class="hp-hint">${tr.t('error_reference', { id: input.requestId })}</p>` : null}`;
  return messagePage(tr, input, 'error-page', title, body, html` data-status="${status}"${country ? html` data-home-country="${country}"` : null}`);
}
