import { decisionPathFor } from '@dcr/domain';
import { DEFAULT_ASSET_BASE } from './assets';
import { translator } from './i18n';
import { PageMode, PreviewPresentation } from './layout';
import { renderDecisionPage } from './render-decision';
import { renderErrorPage } from './render-pages';
import { ParticipantFlow, ParticipantView } from './view';

/** What a template preview shows: one flow version of an application, as its decision page. */
export interface DecisionPreviewInput {
  application: { id: string; name: string };
  flow: ParticipantFlow;
}

export interface DecisionPreviewOptions extends PreviewPresentation {
  /** `page` (default) shows the page a `decision_url` opens; `embed` the framed variant. */
  mode?: PageMode;
  assetBase?: string;
  /** Preferred locale (a tag or an Accept-Language value); falls back to the flow's locale, then English. */
  locale?: string;
  now?: Date;
}

/**
 * The view a person has when they reach the decision of a consent for this flow version: signed in
 * (standard path) or informed (informed path), nothing decided, no deadline. No session stands behind
 * it: the token is empty and no transition is allowed.
 */
export function previewViewOf(input: DecisionPreviewInput, now = new Date()): ParticipantView {
  const path = decisionPathFor('consent', input.flow.pattern === 'informed' ? 'informed' : 'standard');
  return {
    session_token: '',
    kind: 'consent',
    status: path === 'informed' ? 'evidenced' : 'reviewing',
    path,
    delivery_mode: 'direct',
    embed_origin: null,
    redirect_uri: null,
    deadline_at: null,
    expires_at: now.toISOString(),
    locale: input.flow.locale || 'en',
    now: now.toISOString(),
    application: { id: input.application.id, name: input.application.name },
    allowed_transitions: [],
    signed_in: null,
    outcome: null,
    flow: input.flow,
    approval: null,
  };
}

/**
 * A template preview (`/preview/<token>`): the decision step of the flow version rendered by the same
 * code as the real decision pages, under a visible "Preview – nothing is recorded" banner, with every
 * control disabled and no script, in the theme and with the device's layout width asked for.
 */
export function renderDecisionPreviewPage(input: DecisionPreviewInput, options: DecisionPreviewOptions): string {
  return renderDecisionPage(previewViewOf(input, options.now), {
    mode: options.mode ?? 'page',
    assetBase: options.assetBase ?? DEFAULT_ASSET_BASE,
    apiBase: '',
    locale: options.locale,
    preview: { device: options.device, theme: options.theme },
  });
}

export interface PreviewErrorInput {
  /** 410 for an expired link, 404 for a forged link or a deleted template, 400 for a bad parameter (with `message`). */
  status: 400 | 404 | 410;
  message?: string;
  locale?: string;
  assetBase?: string;
}

/** The page of a preview link that shows nothing: expired, not valid, or asked with a bad parameter. */
export function renderPreviewErrorPage(input: PreviewErrorInput): string {
  const tr = translator(input.locale);
  const expired = input.status === 410;
  return renderErrorPage({
    status: input.status,
    locale: input.locale,
    assetBase: input.assetBase,
    title: input.status === 400 ? undefined : tr.t(expired ? 'preview_expired_title' : 'preview_invalid_title'),
    message: input.message ?? tr.t(expired ? 'preview_expired_message' : 'preview_invalid_message'),
  });
}
