import { assetIntegrity, assetUrl, DEFAULT_ASSET_BASE } from './assets';
import { html, idFragment, jsonForScript, safeUrl, SafeHtml } from './html';
import { MessageKey, SupportedLocale, translator, Translator } from './i18n';

/*
 * The consent field: the page the `service-consent-field` element frames inside an organisation's
 * form (`/field/v1/<flow_id>`). One fieldset with a checkbox per purpose that takes a decision
 * (consent unticked; a right to object ticked, with the objection wording), notice-only purposes as
 * text (no control, so a required item such as the terms stays the organisation's own checkbox), the
 * policy link and the recorded-by mark. The frame's script (served with the client scripts) and the
 * stylesheet are the only assets; the script's configuration, the render proof included, is a JSON
 * data block. No cookie, no inline script or style.
 */

/** How the field renders a purpose. */
export type ConsentFieldControl = 'consent' | 'objection' | 'notice';

export interface ConsentFieldPurpose {
  key: string;
  label: string;
  description?: string | null;
  basis: string;
  control: ConsentFieldControl;
}

export interface ConsentFieldView {
  application: { name: string };
  flow: { id: string; version: number; locale?: string | null; policy_url?: string | null };
  /** In flow order: what the field renders. */
  purposes: ConsentFieldPurpose[];
}

export type ConsentFieldTheme = 'light' | 'dark' | 'auto';

/** The frame's script: its URL and Subresource Integrity value. */
export interface ConsentFieldScript {
  url: string;
  integrity: string;
}

export interface ConsentFieldPageOptions {
  /** The language of the field's own text. */
  locale: SupportedLocale;
  theme: ConsentFieldTheme;
  script: ConsentFieldScript;
  /** The service's name, for the recorded-by mark. */
  serviceName: string;
  /** Handed to the frame's script as JSON (`#field-config`). */
  config: Record<string, unknown>;
  assetBase?: string;
}

const BASIS_KEYS: Record<string, MessageKey> = {
  consent: 'basis_consent',
  legitimate_interest: 'basis_legitimate_interest',
  contract: 'basis_contract',
  legal_obligation: 'basis_legal_obligation',
  vital_interest: 'basis_vital_interest',
  public_task: 'basis_public_task',
};

function basisText(tr: Translator, basis: string): string {
  const key = BASIS_KEYS[basis];
  return `${tr.t('basis_label')} ${key ? tr.t(key) : basis}.`;
}

/** `lang` for the flow's own wording when it is written in another language than the field's text. */
function contentLang(flowLocale: string | null | undefined, tr: Translator): SafeHtml | null {
  if (!flowLocale || !/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$/.test(flowLocale)) return null;
  const tag = flowLocale.replace(/_/g, '-');
  if (tag.split('-')[0].toLowerCase() === tr.locale.language) return null;
  return html` lang="${tag}"`;
}

function document(tr: Translator, title: string, theme: ConsentFieldTheme, script: ConsentFieldScript | null, assetBase: string, body: SafeHtml, config: Record<string, unknown> | null): string {
  return html`<!DOCTYPE html>
<html lang="${tr.locale.language}" dir="ltr" data-theme="${theme}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="${assetUrl(assetBase, 'consent-field.css')}" integrity="${assetIntegrity('consent-field.css')}" crossorigin="anonymous">
${script ? html`<script type="module" src="${script.url}" integrity="${script.integrity}" crossorigin="anonymous"></script>` : null}
</head>
<body>
${body}
${config ? html`<script type="application/json" id="field-config">${jsonForScript(config)}</script>` : null}
</body>
</html>
`.value;
}

function control(p: ConsentFieldPurpose, tr: Translator, lang: SafeHtml | null): SafeHtml {
  const id = `cf-${idFragment(p.key)}`;
  const objection = p.control === 'objection';
  const describedBy = [p.description ? `${id}-desc` : null, objection ? `${id}-basis` : null].filter(Boolean).join(' ');
  return html`<div class="cf-item" data-purpose-key="${p.key}" data-control="${p.control}">
<input type="checkbox" id="${id}" name="${p.key}" data-purpose-key="${p.key}" data-basis="${p.basis}"${describedBy ? html` aria-describedby="${describedBy}"` : null}${objection ? html` checked` : null}>
<label for="${id}"${lang}>${p.label || p.key}</label>
${p.description ? html`<p id="${id}-desc" class="cf-desc"${lang}>${p.description}</p>` : null}
${objection ? html`<p id="${id}-basis" class="cf-basis">${basisText(tr, p.basis)} ${tr.t('li_object_text')}</p>` : null}
</div>`;
}

function notice(p: ConsentFieldPurpose, tr: Translator, lang: SafeHtml | null): SafeHtml {
  return html`<li data-purpose-key="${p.key}" data-control="notice">
<span class="cf-notice-label"${lang}>${p.label || p.key}</span>
${p.description ? html`<p class="cf-desc"${lang}>${p.description}</p>` : null}
<p class="cf-basis">${basisText(tr, p.basis)} ${tr.t('notice_text')}</p>
</li>`;
}

/** The consent field page (whole HTML document). */
export function renderConsentFieldPage(view: ConsentFieldView, options: ConsentFieldPageOptions): string {
  const tr = translator(options.locale);
  const lang = contentLang(view.flow.locale, tr);
  const application = view.application.name;
  const decided = view.purposes.filter((p) => p.control !== 'notice');
  const notices = view.purposes.filter((p) => p.control === 'notice');
  const policy = safeUrl(view.flow.policy_url);
  const body = html`<main id="field-root" class="cf-root" data-ready="false" data-flow-id="${view.flow.id}" data-flow-version="${view.flow.version}">
<div class="cf-box">
<fieldset id="field-purposes" class="cf-fieldset" aria-describedby="field-hint">
<legend class="cf-legend">${tr.t('field_legend', { application })}</legend>
<p id="field-hint" class="cf-hint">${tr.t('field_hint')}</p>
${decided.map((p) => control(p, tr, lang))}
</fieldset>
${notices.length > 0 ? html`<ul id="field-notices" class="cf-notices" aria-label="${tr.t('notice_purposes_title')}">
${notices.map((p) => notice(p, tr, lang))}
</ul>` : null}
<div class="cf-footer">
${policy ? html`<p><a id="field-policy-link" class="cf-link" href="${policy}" target="_blank" rel="noopener noreferrer">${tr.t('policy_link')}<span class="cf-visually-hidden"> ${tr.t('opens_new_tab')}</span></a></p>` : null}
<p id="recorded-by" class="cf-mark">${tr.t('field_recorded_by', { service: options.serviceName })}</p>
</div>
</div>
</main>`;
  return document(tr, tr.t('field_doc_title', { application }), options.theme, options.script, options.assetBase ?? DEFAULT_ASSET_BASE, body, options.config);
}

export interface ConsentFieldErrorInput {
  /** Why the field cannot be shown (for the integrator; also posted to the host when it is trusted). */
  message: string;
  locale?: string | null;
  theme?: ConsentFieldTheme;
  /** With a trusted host origin: the script reports the error to the element. */
  script?: ConsentFieldScript | null;
  config?: Record<string, unknown> | null;
  assetBase?: string;
}

/** The field's error page: a short notice in the frame, and (with a script) a `service:error` to the host. */
export function renderConsentFieldErrorPage(input: ConsentFieldErrorInput): string {
  const tr = translator(input.locale);
  const body = html`<main id="field-root" class="cf-root cf-error" data-ready="false">
<div class="cf-box" role="alert">
<h1 id="field-error-title" class="cf-error-title">${tr.t('field_error_title')}</h1>
<p id="field-error-message" class="cf-error-message">${input.message}</p>
</div>
</main>`;
  return document(tr, tr.t('field_error_title'), input.theme ?? 'auto', input.script ?? null, input.assetBase ?? DEFAULT_ASSET_BASE, body, input.config ?? null);
}
