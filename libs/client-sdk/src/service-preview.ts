/*
 * previewTemplate: internal tooling that shows a setup template (tpl_…) as a person would see it. It
 * needs the API key, so it runs only where the key may be: the organisation's own tooling, served from
 * the service's origin (API tokens are never an allowed CORS header).
 */
import { createDecisionFrame, originOf, safely } from './service-frame.js';
import { requestJson, ServiceConfigurationError, ServiceError } from './service-http.js';

export const TEMPLATE_ID = /^tpl_[A-Za-z0-9_-]{1,64}$/;
export const DEVICES = ['desktop', 'mobile'] as const;
export const THEMES = ['light', 'dark'] as const;
export type PreviewDevice = (typeof DEVICES)[number];
export type PreviewTheme = (typeof THEMES)[number];
/** Width of the preview frame per device. */
export const DEVICE_WIDTHS: Readonly<Record<PreviewDevice, string>> = { desktop: '100%', mobile: '390px' };

export interface PreviewOptions {
  templateId: string;
  container: string | Element;
  device?: PreviewDevice;
  theme?: PreviewTheme;
  title?: string;
  onError?(error: ServiceError): void;
}

export interface TemplatePreview {
  readonly frame: HTMLIFrameElement;
  /** Settles when the preview page is loading, or rejects with the typed error of the service's answer. */
  readonly ready: Promise<void>;
  setDevice(device: PreviewDevice): void;
  setTheme(theme: PreviewTheme): void;
  destroy(): void;
}

export interface PreviewContext {
  baseUrl: string;
  flowOrigin: string;
  apiKey: string | undefined;
  timeoutMs: number;
  maxRetries: number;
}

function choice<T extends string>(values: readonly T[], value: unknown, option: string): T {
  if (!values.includes(value as T)) {
    throw new ServiceConfigurationError(`previewTemplate: ${option} must be ${values.map((v) => `'${v}'`).join(' or ')}, not ${JSON.stringify(value)}`, option);
  }
  return value as T;
}

export function openTemplatePreview(context: PreviewContext, options: PreviewOptions): TemplatePreview {
  if (!context.apiKey) throw new ServiceConfigurationError('previewTemplate needs the apiKey option (internal tooling only)', 'apiKey');
  if (typeof options?.templateId !== 'string' || !TEMPLATE_ID.test(options.templateId)) {
    throw new ServiceConfigurationError('previewTemplate: templateId must be a template id (tpl_…)', 'templateId');
  }
  const container = typeof options.container === 'string' ? document.querySelector(options.container) : options.container;
  if (!(container instanceof Element)) throw new ServiceConfigurationError('previewTemplate: container must be an element or a selector that matches one', 'container');
  let device = choice(DEVICES, options.device ?? 'desktop', 'device');
  let theme = choice(THEMES, options.theme ?? 'light', 'theme');

  const frame = createDecisionFrame('about:blank', options.title ?? 'Template preview');
  frame.style.width = DEVICE_WIDTHS[device];
  frame.dataset.device = device;
  frame.dataset.theme = theme;
  container.append(frame);

  let previewUrl: string | undefined;
  let destroyed = false;
  const load = () => {
    if (!previewUrl || destroyed) return;
    const url = new URL(previewUrl);
    url.searchParams.set('device', device);
    url.searchParams.set('theme', theme);
    frame.src = url.href;
  };
  const ready = requestJson<{ preview_url?: unknown } | undefined>({
    method: 'POST',
    url: `${context.baseUrl}/api/v1/templates/${options.templateId}/preview`,
    headers: { Authorization: `Bearer ${context.apiKey}` },
    body: { device, theme },
    timeoutMs: context.timeoutMs,
    maxRetries: context.maxRetries,
  }).then((reply) => {
    const url = reply?.preview_url;
    if (typeof url !== 'string' || originOf(url) !== context.flowOrigin) {
      throw new ServiceError('The service answered without a preview_url on the flow host', { code: 'invalid_response' });
    }
    previewUrl = url;
    load();
  });
  ready.catch((error) => safely(options.onError, error));

  return {
    frame,
    ready,
    setDevice(value) {
      device = choice(DEVICES, value, 'device');
      frame.style.width = DEVICE_WIDTHS[device];
      frame.dataset.device = device;
      load();
    },
    setTheme(value) {
      theme = choice(THEMES, value, 'theme');
      frame.dataset.theme = theme;
      load();
    },
    destroy() {
      destroyed = true;
      frame.remove();
    },
  };
}
