import { assetIntegrity, assetUrl, DEFAULT_ASSET_BASE } from './assets';
import { html, SafeHtml } from './html';
import { Translator } from './i18n';

export type PageMode = 'page' | 'embed';

export type PreviewDevice = 'desktop' | 'mobile';
export type PreviewTheme = 'light' | 'dark';

/** A preview page: no script at all, the colour scheme and the device's layout width fixed on `<html>`. */
export interface PreviewPresentation {
  device: PreviewDevice;
  theme: PreviewTheme;
}

export interface DocumentParts {
  tr: Translator;
  title: string;
  mode: PageMode;
  assetBase?: string;
  /** Page banner (site header); omitted in embed mode. */
  banner?: SafeHtml | null;
  /** Attributes of `<main>` (already rendered). */
  mainAttributes?: SafeHtml;
  main: SafeHtml;
  footer?: SafeHtml | null;
  /** Data elements (`<script type="application/json">`) placed at the end of `<body>`. */
  data?: SafeHtml | null;
  bodyClass?: string;
  /** Preview pages (template previews): see PreviewPresentation. */
  preview?: PreviewPresentation | null;
}

/** The HTML document shared by all hosted pages. */
export function renderDocument(parts: DocumentParts): string {
  const assetBase = parts.assetBase ?? DEFAULT_ASSET_BASE;
  const { tr } = parts;
  const bodyClass = ['hp', `hp-mode-${parts.mode}`, parts.preview ? 'hp-preview' : null, parts.bodyClass].filter(Boolean).join(' ');
  const preview = parts.preview ?? null;
  const doc = html`<!DOCTYPE html>
<html lang="${tr.locale.language}" dir="ltr"${preview ? html` data-theme="${preview.theme}" data-device="${preview.device}"` : null}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="same-origin">
<meta name="color-scheme" content="${preview ? preview.theme : 'light dark'}">
<title>${parts.title}</title>
<link rel="stylesheet" href="${assetUrl(assetBase, 'participant.css')}" integrity="${assetIntegrity('participant.css')}" crossorigin="anonymous">
${preview ? null : html`<script src="${assetUrl(assetBase, 'participant.js')}" integrity="${assetIntegrity('participant.js')}" crossorigin="anonymous" defer></script>`}
</head>
<body class="${bodyClass}">
<a class="hp-skip-link" href="#main">${tr.t('skip_link')}</a>
${parts.mode === 'page' && parts.banner ? parts.banner : null}
<main id="main" class="hp-main" tabindex="-1"${parts.mainAttributes ?? null}>
${parts.main}
</main>
${parts.footer ?? null}
${parts.data ?? null}
</body>
</html>
`;
  return doc.value;
}
