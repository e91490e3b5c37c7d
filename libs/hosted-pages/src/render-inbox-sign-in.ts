import { DEFAULT_ASSET_BASE } from './assets';
import { html, SafeHtml } from './html';
import { translator, Translator } from './i18n';
import { renderDocument } from './layout';
import { messagePage } from './render-pages';

export interface InboxSignInPageOptions {
  locale?: string;
  assetBase?: string;
  /** `email`: ask for the address; `code`: the code was mailed to `email`. */
  step: 'email' | 'code';
  email?: string;
  /**
   * Shown as an alert tied to the field it concerns; `codes_limited` (the code step): no new code was
   * sent, as too many were asked for the address within the hour; `network_limited` (the e-mail
   * step): no code was sent, as too many were asked for from the visitor's network address.
   */
  error?: 'email' | 'code' | 'codes_limited' | 'network_limited' | null;
  /** Where signing in leads (a path of the inbox, checked by the caller: inboxReturnPath). */
  next?: string;
}

/** `value` when it is a path of the person's inbox pages (`/inbox…`, nothing that leaves the site), else undefined. */
export function inboxReturnPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 300) return undefined;
  return /^\/inbox(\/[a-z_]+)*(\?[A-Za-z0-9_=&%.-]*)?$/.test(value) ? value : undefined;
}

/** Signing out of the inbox pages (a plain form: `/inbox/sign_out` ends the inbox session and clears its cookie). */
export function inboxSignOutForm(tr: Translator): SafeHtml {
  return html`<form id="inbox-sign-out" class="hp-inline-form" method="post" action="/inbox/sign_out"><button type="submit" class="hp-button hp-button-secondary">${tr.t('inbox_sign_out')}</button></form>`;
}

/**
 * Signing in to the inbox: plain HTML forms (they work without the script), the e-mail address
 * first, then the one-time code mailed to it. They post to `/inbox/sign_in` and `/inbox/session`.
 */
export function renderInboxSignInPage(options: InboxSignInPageOptions): string {
  const tr = translator(options.locale);
  const emailError = options.error === 'email';
  const codeError = options.error === 'code';
  const next = inboxReturnPath(options.next);
  const nextField = next ? html`<input type="hidden" name="next" value="${next}">` : null;
  const networkLimited = options.error === 'network_limited'
    ? html`<div id="inbox-sign-in-error" class="hp-error" role="alert"><p>${tr.t('error_network_limited')}</p></div>
`
    : null;
  const emailForm = html`${networkLimited}<form id="inbox-sign-in" class="hp-form" method="post" action="/inbox/sign_in" novalidate>
${nextField}
<div class="hp-field">
<label for="inbox-email" class="hp-label">${tr.t('email_label')}</label>
<p id="inbox-email-hint" class="hp-hint">${tr.t('email_hint')}</p>
<input id="inbox-email" name="email" type="email" class="hp-input" autocomplete="email" required value="${options.email ?? ''}"
 aria-describedby="inbox-email-hint${emailError ? ' inbox-email-error' : ''}"${emailError ? html` aria-invalid="true"` : null}>
${emailError ? html`<p id="inbox-email-error" class="hp-field-error" role="alert">${tr.t('error_email_invalid')}</p>` : null}
</div>
<div class="hp-actions"><button type="submit" id="inbox-send-code" class="hp-button">${tr.t('send_code')}</button></div>
</form>`;
  const limited = options.error === 'codes_limited';
  const codeForm = html`${limited
    ? html`<div id="inbox-sign-in-error" class="hp-error" role="alert"><p>${tr.t('error_codes_limited')}</p></div>`
    : html`<p id="inbox-code-sent" class="hp-notice" role="status">${tr.t('code_sent', { email: options.email ?? '' })}</p>`}
<form id="inbox-code-form" class="hp-form" method="post" action="/inbox/session" novalidate>
<input type="hidden" name="email" value="${options.email ?? ''}">
${nextField}
<div class="hp-field">
<label for="inbox-code" class="hp-label">${tr.t('code_label')}</label>
<p id="inbox-code-hint" class="hp-hint">${tr.t('code_hint')}</p>
<input id="inbox-code" name="code" type="text" class="hp-input" inputmode="numeric" autocomplete="one-time-code" required
 aria-describedby="inbox-code-hint${codeError ? ' inbox-code-error' : ''}"${codeError ? html` aria-invalid="true"` : null}>
${codeError ? html`<p id="inbox-code-error" class="hp-field-error" role="alert">${tr.t('error_code_rejected')}</p>` : null}
</div>
<div class="hp-actions"><button type="submit" id="inbox-verify" class="hp-button">${tr.t('verify_button')}</button></div>
</form>
${limited
  ? null
  : html`<form id="inbox-resend" class="hp-form" method="post" action="/inbox/sign_in">
<input type="hidden" name="email" value="${options.email ?? ''}">
${nextField}
<div class="hp-actions"><button type="submit" id="inbox-resend-code" class="hp-button hp-button-secondary">${tr.t('resend_code')}</button></div>
</form>`}`;
  // Titled after where signing in leads: the receipt mail's link to the records page is not about pending requests.
  const title = next !== undefined && /^\/inbox\/records(\?|$)/.test(next) ? tr.t('records_title') : tr.t('inbox_title');
  return renderDocument({
    tr,
    title,
    mode: 'page',
    assetBase: options.assetBase ?? DEFAULT_ASSET_BASE,
    bodyClass: 'hp-inbox-page',
    main: html`<div id="inbox" class="hp-inbox">
<h1 id="page-title">${title}</h1>
<h2>${tr.t('sign_in_title')}</h2>
${options.step === 'code' ? codeForm : emailForm}
</div>`,
  });
}

/**
 * The answer (403) to a sign-in form another website sent (login CSRF): it says nothing was done and
 * links to signing in on this site, back to `next` when that is a path of the inbox.
 */
export function renderInboxSignInRefusedPage(options: { locale?: string; assetBase?: string; next?: string }): string {
  const tr = translator(options.locale);
  const body = html`<p id="page-message">${tr.t('inbox_sign_in_refused_message')}</p>
<p><a id="inbox-sign-in-link" class="hp-button hp-button-primary" href="${inboxReturnPath(options.next) ?? '/inbox'}">${tr.t('inbox_sign_in_refused_link')}</a></p>`;
  return messagePage(tr, options, 'inbox-sign-in-refused', tr.t('inbox_sign_in_refused_title'), body, html` data-status="403"`);
}
