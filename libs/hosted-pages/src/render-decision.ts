import { DEFAULT_ASSET_BASE } from './assets';
import { html, idFragment, join, jsonForScript, raw, safeUrl, SafeHtml } from './html';
import { clientMessages, MessageKey, translator, Translator } from './i18n';
import { PageMode, PreviewPresentation, renderDocument } from './layout';
import { DecisionStatus, ParticipantPurpose, ParticipantView, TERMINAL_STATUSES } from './view';

export interface DecisionPageOptions {
  /** `page` for `/decisions/<token>`, `embed` for `/decisions/<token>/embed` (iframe). */
  mode: PageMode;
  /** Where participant.js and participant.css are served, e.g. `/assets/hosted/v1`. */
  assetBase?: string;
  /** Prefix of the participant API, `''` for the same origin. */
  apiBase?: string;
  /** Preferred locale (a tag or an Accept-Language value); falls back to the view's locale, then English. */
  locale?: string;
  /**
   * A template preview (`renderDecisionPreviewPage`): the same page with the preview banner, every
   * control inside a disabled fieldset, no script and no data for one, the theme and device fixed.
   */
  preview?: PreviewPresentation | null;
}

/** The page sections; exactly one is visible. */
export type StepId = 'start' | 'sign-in' | 'verifying' | 'informed' | 'decision' | 'done';

const PATH_STATUSES: Record<'standard' | 'informed', readonly DecisionStatus[]> = {
  standard: ['pending', 'authenticating', 'verifying', 'reviewing', 'fulfilled'],
  informed: ['pending', 'informed', 'evidenced', 'fulfilled'],
};

const STEP_OF_STATUS: Record<DecisionStatus, StepId> = {
  pending: 'start',
  authenticating: 'sign-in',
  verifying: 'verifying',
  reviewing: 'decision',
  informed: 'informed',
  evidenced: 'decision',
  fulfilled: 'done',
  expired: 'done',
  revoked: 'done',
};

const STEP_NAME: Record<StepId, MessageKey> = {
  start: 'step_name_start',
  'sign-in': 'step_name_sign_in',
  verifying: 'step_name_verifying',
  informed: 'step_name_informed',
  decision: 'step_name_decision',
  done: 'step_name_done',
};

const BASIS_KEYS: Record<string, MessageKey> = {
  consent: 'basis_consent',
  legitimate_interest: 'basis_legitimate_interest',
  contract: 'basis_contract',
  legal_obligation: 'basis_legal_obligation',
  vital_interest: 'basis_vital_interest',
  public_task: 'basis_public_task',
};

const TRIGGER_KEYS: Record<string, MessageKey> = {
  scope: 'trigger_scope',
  action: 'trigger_action',
  value: 'trigger_value',
  time: 'trigger_time',
  escalation: 'trigger_escalation',
  reputation: 'trigger_reputation',
};

function pathOf(view: ParticipantView): 'standard' | 'informed' {
  return view.path === 'informed' ? 'informed' : 'standard';
}

/** The section shown for a view (a recorded outcome always shows the final section). */
export function stepForView(view: Pick<ParticipantView, 'status' | 'outcome'>): StepId {
  if (view.outcome) return 'done';
  return STEP_OF_STATUS[view.status] ?? 'start';
}

function isTerminal(view: ParticipantView): boolean {
  return TERMINAL_STATUSES.includes(view.status) || view.outcome !== null;
}

function basisText(tr: Translator, basis: string): string {
  const key = BASIS_KEYS[basis];
  return `${tr.t('basis_label')} ${key ? tr.t(key) : basis}.`;
}

function decisionTitle(view: ParticipantView, tr: Translator): string {
  if (view.kind === 'approval') return view.approval?.title || tr.t('kind_approval');
  return view.flow?.title || view.flow?.name || tr.t('kind_consent');
}

function description(view: ParticipantView): string | null {
  return (view.kind === 'approval' ? view.approval?.description : view.flow?.description) || null;
}

/** `lang` attribute for flow-authored text when it is written in another language than the page. */
function contentLang(view: ParticipantView, tr: Translator): SafeHtml | null {
  const flowLocale = view.kind === 'consent' ? view.flow?.locale : null;
  if (!flowLocale || !/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$/.test(flowLocale)) return null;
  const tag = flowLocale.replace(/_/g, '-');
  if (tag.split('-')[0].toLowerCase() === tr.locale.language) return null;
  return html` lang="${tag}"`;
}

function doneText(view: ParticipantView, tr: Translator): { variant: string; title: string; message: string } {
  const application = view.application?.name ?? '';
  if (view.outcome) {
    const key = `done_${view.outcome}` as MessageKey;
    return { variant: view.outcome, title: tr.t('done_title_recorded'), message: tr.t(key in tr.messages ? key : 'done_fulfilled') };
  }
  switch (view.status) {
    case 'expired':
      return { variant: 'expired', title: tr.t('done_title_expired'), message: tr.t('done_expired', { application }) };
    case 'revoked':
      return { variant: 'revoked', title: tr.t('done_title_revoked'), message: tr.t('done_revoked') };
    default:
      return { variant: 'fulfilled', title: tr.t('done_title_recorded'), message: tr.t('done_fulfilled') };
  }
}

function section(id: StepId, current: StepId, heading: string, body: SafeHtml): SafeHtml {
  return html`<section id="step-${id}" class="hp-step" data-step="${id}" aria-labelledby="step-${id}-title"${id === current ? null : raw(' hidden')}>
<h2 id="step-${id}-title" class="hp-step-title" tabindex="-1">${heading}</h2>
${body}
</section>`;
}

function fieldError(id: string): SafeHtml {
  return html`<p id="${id}-error" class="hp-field-error" data-error-for="${id}"></p>`;
}

function dataFields(view: ParticipantView, tr: Translator, prefix: string, lang: SafeHtml | null): SafeHtml | null {
  const fields = view.flow?.data_fields ?? [];
  if (fields.length === 0) return null;
  return html`<section class="hp-block" aria-labelledby="${prefix}-fields-title">
<h3 id="${prefix}-fields-title">${tr.t('data_fields_title')}</h3>
<ul class="hp-fields"${lang}>
${fields.map(
  (f) => html`<li data-field-key="${f.key}">${f.label || f.key} <span class="hp-tag"${lang ? html` lang="${tr.locale.language}"` : null}>${tr.t(f.required ? 'field_required' : 'field_optional')}${f.sensitive ? ` ${tr.t('field_sensitive')}` : ''}</span></li>
`,
)}</ul>
</section>`;
}

/** Text for the page; `authored` when it is the flow's own wording (then it carries the flow's `lang`). */
interface Text {
  text: string;
  authored: boolean;
}

/**
 * A retention or revocation policy: free text, an ISO 8601 duration (written out in the page's
 * language), or a structured object kept as the flow gave it: its `description` (or `text`,
 * `summary`) and `duration` when present, else its plain values as `key: value`.
 */
function policyText(policy: unknown, tr: Translator): Text | null {
  if (policy === null || policy === undefined) return null;
  if (typeof policy === 'string') {
    const trimmed = policy.trim();
    if (!trimmed) return null;
    const localized = tr.isoDuration(trimmed);
    return localized ? { text: localized, authored: false } : { text: trimmed, authored: true };
  }
  if (typeof policy !== 'object' || Array.isArray(policy)) return null;
  const record = policy as Record<string, unknown>;
  const duration = typeof record['duration'] === 'string' ? policyText(record['duration'], tr) : null;
  const prose = ['description', 'text', 'summary'].map((k) => record[k]).find((v): v is string => typeof v === 'string' && v.trim() !== '');
  if (duration || prose) {
    return { text: [duration?.text, prose?.trim()].filter(Boolean).join(' – '), authored: Boolean(prose) || Boolean(duration?.authored) };
  }
  const entries = Object.entries(record)
    .filter(([, v]) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
    .map(([k, v]) => `${k}: ${String(v)}`);
  return entries.length ? { text: entries.join('; '), authored: true } : null;
}

function retentionText(view: ParticipantView, tr: Translator): Text | null {
  return policyText(view.flow?.retention, tr);
}

function revocationText(view: ParticipantView, tr: Translator): Text {
  return policyText(view.flow?.revocation_policy, tr) ?? { text: tr.t('revocation_default'), authored: false };
}

function facts(view: ParticipantView, tr: Translator, prefix: string, lang: SafeHtml | null): SafeHtml {
  const flow = view.flow;
  const retention = retentionText(view, tr);
  const revocation = revocationText(view, tr);
  const duration = tr.duration(flow?.consent_duration ?? null);
  const policy = safeUrl(flow?.policy_url);
  const rows: (SafeHtml | null)[] = [
    retention ? html`<div class="hp-fact"><dt>${tr.t('retention_label')}</dt><dd${retention.authored ? lang : null}>${retention.text}</dd></div>` : null,
    duration ? html`<div class="hp-fact"><dt>${tr.t('duration_label')}</dt><dd>${duration}</dd></div>` : null,
    html`<div class="hp-fact"><dt>${tr.t('revocation_label')}</dt><dd${revocation.authored ? lang : null}>${revocation.text}</dd></div>`,
    policy
      ? html`<div class="hp-fact"><dt>${tr.t('policy_link')}</dt><dd><a id="${prefix}-policy-link" class="hp-link" href="${policy}" target="_blank" rel="noopener noreferrer">${tr.t('policy_link')}<span class="hp-visually-hidden"> ${tr.t('opens_new_tab')}</span></a></dd></div>`
      : null,
  ];
  return html`<section class="hp-block" aria-labelledby="${prefix}-terms-title">
<h3 id="${prefix}-terms-title">${tr.t('terms_title')}</h3>
<dl class="hp-facts">
${join(rows, '\n')}
</dl>
</section>`;
}

function purposeText(p: ParticipantPurpose, tr: Translator, prefix: string, lang: SafeHtml | null, withNotice: boolean): SafeHtml {
  const id = `${prefix}-${idFragment(p.key)}`;
  return html`<li class="hp-purpose-item" data-purpose-key="${p.key}">
<span class="hp-purpose-label"${lang}>${p.label || p.key}</span>
${p.description ? html`<p id="${id}-desc" class="hp-purpose-desc"${lang}>${p.description}</p>` : null}
<p id="${id}-basis" class="hp-basis">${basisText(tr, p.basis)}${withNotice && !p.takes_decision ? ` ${tr.t('notice_text')}` : ''}</p>
</li>`;
}

/** All purposes as text (informed path, before the decision). */
function purposeList(view: ParticipantView, tr: Translator, prefix: string, lang: SafeHtml | null): SafeHtml | null {
  const purposes = view.flow?.purposes ?? [];
  if (purposes.length === 0) return null;
  return html`<section class="hp-block" aria-labelledby="${prefix}-purposes-title">
<h3 id="${prefix}-purposes-title">${tr.t('purposes_title')}</h3>
<ul class="hp-purpose-list">
${purposes.map((p) => purposeText(p, tr, prefix, lang, true))}
</ul>
</section>`;
}

function purposeControl(p: ParticipantPurpose, tr: Translator, lang: SafeHtml | null): SafeHtml {
  const id = `purpose-${idFragment(p.key)}`;
  const legitimate = p.basis === 'legitimate_interest';
  const required = !legitimate && p.required === true;
  const describedBy = [p.description ? `${id}-desc` : null, `${id}-basis`].filter(Boolean).join(' ');
  return html`<div class="hp-check hp-purpose" data-purpose-key="${p.key}">
<input type="checkbox" id="${id}" name="purposes" value="${p.key}" data-basis="${p.basis}" data-required="${required ? 'true' : 'false'}" aria-describedby="${describedBy}"${legitimate ? raw(' checked') : null}>
<label for="${id}"><span class="hp-purpose-label"${lang}>${p.label || p.key}</span>${required ? html` <span class="hp-tag">${tr.t('purpose_required')}</span>` : null}</label>
${p.description ? html`<p id="${id}-desc" class="hp-purpose-desc"${lang}>${p.description}</p>` : null}
<p id="${id}-basis" class="hp-basis">${basisText(tr, p.basis)}${legitimate ? ` ${tr.t('li_object_text')}` : ''}</p>
${fieldError(id)}
</div>`;
}

function consentForm(view: ParticipantView, tr: Translator, lang: SafeHtml | null): SafeHtml {
  const purposes = view.flow?.purposes ?? [];
  const decided = purposes.filter((p) => p.takes_decision);
  const notices = purposes.filter((p) => !p.takes_decision);
  return html`<form id="consent-form" class="hp-form" novalidate>
${
  decided.length > 0
    ? html`<fieldset id="purposes" class="hp-fieldset" aria-describedby="purposes-hint">
<legend class="hp-legend">${tr.t('purposes_legend')}</legend>
<p id="purposes-hint" class="hp-hint">${tr.t('purposes_hint')}</p>
${decided.map((p) => purposeControl(p, tr, lang))}
${fieldError('purposes')}
</fieldset>`
    : null
}
${
  notices.length > 0
    ? html`<section class="hp-block hp-notices" aria-labelledby="notice-purposes-title">
<h3 id="notice-purposes-title">${tr.t('notice_purposes_title')}</h3>
<ul class="hp-purpose-list">
${notices.map((p) => purposeText(p, tr, 'notice', lang, true))}
</ul>
</section>`
    : null
}
<div class="hp-actions">
<button type="submit" id="grant-button" class="hp-button hp-button-primary" name="outcome" value="granted">${tr.t(decided.length > 0 ? 'grant_button' : 'grant_button_simple')}</button>
<button type="submit" id="decline-button" class="hp-button hp-button-secondary" name="outcome" value="declined">${tr.t('decline_button')}</button>
</div>
</form>`;
}

function approvalDetails(view: ParticipantView, tr: Translator): SafeHtml {
  const a = view.approval;
  const value = tr.money(a?.value ?? null);
  const triggerKey = a?.trigger ? TRIGGER_KEYS[a.trigger] : undefined;
  const rows: (SafeHtml | null)[] = [
    html`<div class="hp-fact"><dt>${tr.t('action_label')}</dt><dd id="approval-action">${a?.action ?? ''}</dd></div>`,
    a?.description ? html`<div class="hp-fact"><dt>${tr.t('description_label')}</dt><dd id="approval-description">${a.description}</dd></div>` : null,
    value ? html`<div class="hp-fact"><dt>${tr.t('value_label')}</dt><dd id="approval-value" data-amount="${a?.value?.amount}" data-currency="${a?.value?.currency}">${value}</dd></div>` : null,
    a?.trigger
      ? html`<div class="hp-fact"><dt>${tr.t('trigger_label')}</dt><dd id="approval-trigger" data-trigger="${a.trigger}">${triggerKey ? tr.t(triggerKey) : a.trigger}</dd></div>`
      : null,
    a?.agent_id ? html`<div class="hp-fact"><dt>${tr.t('agent_label')}</dt><dd id="approval-agent"><code>${a.agent_id}</code></dd></div>` : null,
    html`<div class="hp-fact"><dt>${tr.t('application_label')}</dt><dd id="approval-application">${view.application?.name ?? ''}</dd></div>`,
  ];
  return html`<dl id="approval-details" class="hp-facts">
${join(rows, '\n')}
</dl>`;
}

function approvalForm(tr: Translator): SafeHtml {
  return html`<form id="approval-form" class="hp-form" novalidate>
<div class="hp-actions">
<button type="submit" id="approve-button" class="hp-button hp-button-primary" name="outcome" value="approved">${tr.t('approve_button')}</button>
<button type="submit" id="deny-button" class="hp-button hp-button-secondary" name="outcome" value="denied">${tr.t('deny_button')}</button>
</div>
<fieldset id="counter" class="hp-fieldset">
<legend class="hp-legend">${tr.t('counter_title')}</legend>
<div class="hp-field">
<label for="counter-note" class="hp-label">${tr.t('counter_label')}</label>
<p id="counter-note-hint" class="hp-hint">${tr.t('counter_hint')}</p>
<textarea id="counter-note" name="note" class="hp-input hp-textarea" rows="3" maxlength="2000" aria-describedby="counter-note-hint"></textarea>
${fieldError('counter-note')}
</div>
<button type="submit" id="counter-button" class="hp-button hp-button-secondary" name="outcome" value="countered">${tr.t('counter_button')}</button>
</fieldset>
</form>`;
}

function signedIn(view: ParticipantView, tr: Translator): SafeHtml {
  // Always present so the script can fill it after sign-in.
  const hint = view.signed_in?.email_hint;
  return html`<p id="signed-in-as" class="hp-hint"${hint ? null : raw(' hidden')}>${hint ? tr.t('signed_in_as', { email: hint }) : ''}</p>`;
}

function sections(view: ParticipantView, tr: Translator, current: StepId): SafeHtml {
  const lang = contentLang(view, tr);
  const path = pathOf(view);
  const approval = view.kind === 'approval';
  const out: SafeHtml[] = [];

  const startText = approval ? 'start_text_approval' : path === 'informed' ? 'start_text_informed' : 'start_text_standard';
  out.push(
    section(
      'start',
      current,
      tr.t('start_title'),
      html`<p>${tr.t(startText)}</p>
<div class="hp-actions"><button type="button" id="start-button" class="hp-button hp-button-primary">${tr.t('start_button')}</button></div>`,
    ),
  );

  if (path === 'standard') {
    out.push(
      section(
        'sign-in',
        current,
        tr.t('sign_in_title'),
        html`<form id="sign-in-form" class="hp-form" novalidate>
<div class="hp-field">
<label for="sign-in-email" class="hp-label">${tr.t('email_label')}</label>
<p id="sign-in-email-hint" class="hp-hint">${tr.t('email_hint')}</p>
<input type="email" id="sign-in-email" name="email" class="hp-input" autocomplete="email" inputmode="email" spellcheck="false" required aria-required="true" aria-describedby="sign-in-email-hint">
${fieldError('sign-in-email')}
</div>
<div class="hp-actions"><button type="submit" id="sign-in-submit" class="hp-button hp-button-primary">${tr.t('send_code')}</button></div>
</form>
<form id="code-form" class="hp-form" novalidate hidden>
<p id="code-sent-message" class="hp-notice"></p>
<div class="hp-field">
<label for="sign-in-code" class="hp-label">${tr.t('code_label')}</label>
<p id="sign-in-code-hint" class="hp-hint">${tr.t('code_hint')}</p>
<input type="text" id="sign-in-code" name="code" class="hp-input hp-input-code" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]{6,8}" maxlength="8" spellcheck="false" required aria-required="true" aria-describedby="sign-in-code-hint">
${fieldError('sign-in-code')}
</div>
<div class="hp-actions">
<button type="submit" id="code-submit" class="hp-button hp-button-primary">${tr.t('verify_button')}</button>
<button type="button" id="code-resend" class="hp-button hp-button-secondary">${tr.t('resend_code')}</button>
<button type="button" id="sign-in-restart" class="hp-button hp-button-link">${tr.t('change_email')}</button>
</div>
</form>`,
      ),
    );
    out.push(
      section(
        'verifying',
        current,
        tr.t('verifying_title'),
        html`<p>${tr.t('verifying_text')}</p>
<div class="hp-actions"><button type="button" id="verify-continue" class="hp-button hp-button-primary">${tr.t('continue_button')}</button></div>`,
      ),
    );
  }

  if (path === 'informed' && !approval) {
    out.push(
      section(
        'informed',
        current,
        tr.t('informed_title'),
        html`<p>${tr.t('informed_intro')}</p>
${dataFields(view, tr, 'informed', lang)}
${purposeList(view, tr, 'informed', lang)}
${facts(view, tr, 'informed', lang)}
<form id="informed-form" class="hp-form" novalidate>
<div class="hp-check">
<input type="checkbox" id="informed-ack" name="acknowledged" value="yes" required aria-required="true">
<label for="informed-ack">${tr.t('informed_ack')}</label>
${fieldError('informed-ack')}
</div>
<div class="hp-actions"><button type="submit" id="informed-submit" class="hp-button hp-button-primary">${tr.t('continue_button')}</button></div>
</form>`,
      ),
    );
  }

  out.push(
    section(
      'decision',
      current,
      tr.t(approval ? 'decision_title_approval' : 'decision_title_consent'),
      approval
        ? html`${signedIn(view, tr)}
${approvalDetails(view, tr)}
${approvalForm(tr)}`
        : html`${signedIn(view, tr)}
${dataFields(view, tr, 'decision', lang)}
${facts(view, tr, 'decision', lang)}
${consentForm(view, tr, lang)}`,
    ),
  );

  const done = doneText(view, tr);
  out.push(
    html`<section id="step-done" class="hp-step hp-done" data-step="done" data-variant="${current === 'done' ? done.variant : ''}" aria-labelledby="step-done-title"${current === 'done' ? null : raw(' hidden')}>
<h2 id="step-done-title" class="hp-step-title" tabindex="-1">${current === 'done' ? done.title : ''}</h2>
<p id="done-message">${current === 'done' ? done.message : ''}</p>
<p id="done-extra" class="hp-hint" hidden></p>
<p id="done-redirect" hidden><a id="redirect-link" class="hp-link" href="#"></a></p>
</section>`,
  );
  return join(out, '\n');
}

function progress(view: ParticipantView, tr: Translator, current: StepId): SafeHtml {
  const statuses = PATH_STATUSES[pathOf(view)];
  const index = statuses.indexOf(view.status);
  const text =
    current !== 'done' && index >= 0 ? tr.t('step_progress', { current: index + 1, total: statuses.length, name: tr.t(STEP_NAME[current]) }) : '';
  return html`<p id="step-progress" class="hp-progress"${text ? null : raw(' hidden')}>${text}</p>`;
}

function deadline(view: ParticipantView, tr: Translator): SafeHtml | null {
  if (!view.deadline_at) return null;
  const when = tr.dateTime(view.deadline_at);
  if (!when) return null;
  const iso = new Date(view.deadline_at).toISOString();
  return html`<p id="deadline" class="hp-deadline" data-deadline-at="${iso}"${isTerminal(view) ? raw(' hidden') : null}>
<span>${tr.t('deadline_prefix')}</span> <time id="deadline-time" datetime="${iso}" data-local-time="datetime">${when}</time>.
<span id="deadline-remaining" class="hp-remaining" role="timer" aria-live="off"></span>
</p>`;
}

/** The banner of a template preview: it states that nothing is recorded, above everything else. */
function previewBanner(view: ParticipantView, tr: Translator): SafeHtml {
  return html`<div id="preview-banner" class="hp-preview-banner" role="note" aria-labelledby="preview-banner-title">
<p id="preview-banner-title" class="hp-preview-banner-title">${tr.t('preview_banner')}</p>
<p id="preview-banner-detail" class="hp-preview-banner-detail">${tr.t('preview_banner_detail', { version: view.flow?.version ?? '' })}</p>
</div>
`;
}

/** The participant page for a decision (whole HTML document). */
export function renderDecisionPage(view: ParticipantView, options: DecisionPageOptions): string {
  const tr = translator(options.locale, view.locale, view.flow?.locale);
  const mode: PageMode = options.mode === 'embed' ? 'embed' : 'page';
  const current = stepForView(view);
  const title = decisionTitle(view, tr);
  const application = view.application?.name ?? '';
  const lang = contentLang(view, tr);
  const desc = description(view);
  const terminal = isTerminal(view);
  const preview = options.preview ?? null;

  const controls = html`${sections(view, tr, current)}
<div id="cancel-area" class="hp-cancel"${terminal ? raw(' hidden') : null}>
<button type="button" id="cancel-button" class="hp-button hp-button-link">${tr.t('cancel_button')}</button>
</div>`;

  const main = html`${preview ? previewBanner(view, tr) : null}<div id="decision-root" class="hp-decision" data-kind="${view.kind}" data-status="${view.status}" data-path="${pathOf(view)}" data-mode="${mode}" data-delivery-mode="${view.delivery_mode}" data-step="${current}" data-outcome="${view.outcome ?? ''}"${preview ? raw(' data-preview="true"') : null} aria-busy="false">
<header class="hp-header">
<p class="hp-eyebrow">${tr.t(view.kind === 'approval' ? 'kind_approval' : 'kind_consent')}</p>
<h1 id="decision-title"${lang}>${title}</h1>
<p id="decision-requester" class="hp-requester">${tr.t(view.kind === 'approval' ? 'requester_approval' : 'requester_consent', { application })}</p>
${desc ? html`<p id="decision-description" class="hp-description"${lang}>${desc}</p>` : null}
${deadline(view, tr)}
${progress(view, tr, current)}
</header>
<div id="status-message" class="hp-status" role="status" aria-live="polite" aria-atomic="true"></div>
<div id="error-message" class="hp-error" role="alert" aria-atomic="true"></div>
${preview ? null : html`<noscript><p class="hp-notice">${tr.t('noscript')}</p></noscript>`}
${preview ? html`<fieldset id="preview-controls" class="hp-preview-controls" disabled>
${controls}
</fieldset>` : controls}
</div>`;

  const config = {
    mode,
    api_base: (options.apiBase ?? '').replace(/\/+$/, ''),
    locale: tr.locale.language,
    intl_locale: tr.locale.intl,
    messages: clientMessages(tr.messages),
  };

  return renderDocument({
    tr,
    title: tr.t(preview ? 'preview_doc_title' : 'doc_title', { title, application }),
    mode,
    assetBase: options.assetBase ?? DEFAULT_ASSET_BASE,
    bodyClass: 'hp-decision-page',
    banner: html`<header class="hp-banner"><p class="hp-banner-name">${tr.t('banner_label', { application })}</p></header>`,
    main,
    footer: mode === 'page' ? html`<footer class="hp-footer"><p>${tr.t('footer_text', { application })}</p></footer>` : null,
    data: preview
      ? null
      : html`<script type="application/json" id="decision-view">${jsonForScript(view)}</script>
<script type="application/json" id="decision-config">${jsonForScript(config)}</script>`,
    preview,
  });
}
