import { de } from './messages/de';
import { Catalogue, en, MessageKey } from './messages/en';

export type { Catalogue, MessageKey } from './messages/en';

export const SUPPORTED_LOCALES = ['en', 'de'] as const;
export type SupportedLocale = (typeof SUPPORTED_LOCALES)[number];
export const DEFAULT_LOCALE: SupportedLocale = 'en';

const CATALOGUES: Record<SupportedLocale, Catalogue> = { en, de };

export function catalogue(locale: SupportedLocale): Catalogue {
  return CATALOGUES[locale];
}

/** Language tags of a candidate: a tag (`de-DE`, `de_AT`) or an Accept-Language value (by weight). */
function tagsOf(candidate: string): string[] {
  return candidate
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q ? Number(q.slice(2)) : 1;
      return { tag: tag.trim().replace(/_/g, '-'), weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((t) => t.tag !== '' && t.tag !== '*' && t.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .map((t) => t.tag);
}

export interface ResolvedLocale {
  /** The catalogue language. */
  language: SupportedLocale;
  /** The tag used with Intl (the first candidate tag of that language, e.g. `de-AT`, else the language). */
  intl: string;
}

/** The first supported language among the candidates (in order), else English. */
export function resolveLocale(...candidates: (string | null | undefined)[]): ResolvedLocale {
  for (const candidate of candidates) {
    if (!candidate) continue;
    for (const tag of tagsOf(candidate)) {
      const language = tag.split('-')[0].toLowerCase();
      if ((SUPPORTED_LOCALES as readonly string[]).includes(language)) {
        let intl: string = language;
        try {
          intl = Intl.getCanonicalLocales(tag)[0] ?? language;
        } catch {
          intl = language;
        }
        return { language: language as SupportedLocale, intl };
      }
    }
  }
  return { language: DEFAULT_LOCALE, intl: DEFAULT_LOCALE };
}

/** Replaces `{name}` placeholders. The result is plain text (escape it when writing HTML). */
export function format(template: string, vars: Record<string, string | number> = {}): string {
  return template.replace(/\{([a-z_]+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

export class Translator {
  readonly messages: Catalogue;
  constructor(readonly locale: ResolvedLocale) {
    this.messages = catalogue(locale.language);
  }
  t(key: MessageKey, vars?: Record<string, string | number>): string {
    return format(this.messages[key], vars);
  }

  /** `2 March 2025, 14:05 UTC` style, in UTC (participant.js re-renders it in local time). */
  dateTime(iso: string | null | undefined): string | null {
    if (!iso) return null;
    const date = new Date(iso);
    if (Number.isNaN(date.getTime())) return null;
    const text = new Intl.DateTimeFormat(this.locale.intl, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(date);
    return `${text} ${this.t('utc_suffix')}`;
  }

  /** A minor-unit amount as currency (`{amount: 12550, currency: 'EUR'}` → `125,50 €` in German). */
  money(value: { amount: number; currency: string } | null | undefined): string | null {
    if (!value || typeof value.amount !== 'number' || !Number.isFinite(value.amount)) return null;
    const currency = String(value.currency ?? '').toUpperCase();
    try {
      const formatter = new Intl.NumberFormat(this.locale.intl, { style: 'currency', currency });
      const digits = formatter.resolvedOptions().maximumFractionDigits ?? 2;
      return formatter.format(value.amount / 10 ** digits);
    } catch {
      return `${new Intl.NumberFormat(this.locale.intl).format(value.amount)} ${currency}`.trim();
    }
  }

  /** An ISO 8601 duration (`P1Y6M`, `P30D`, `PT12H`) in words; other text is returned as is. */
  duration(value: string | null | undefined): string | null {
    if (!value) return null;
    return this.isoDuration(value) ?? value;
  }

  /** An ISO 8601 duration in words, or null when the value is not one. */
  isoDuration(value: string): string | null {
    const match = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(value.trim());
    if (!match || value.trim() === 'P' || value.trim().endsWith('T')) return null;
    const units = ['year', 'month', 'week', 'day', 'hour', 'minute', 'second'] as const;
    const plural = new Intl.PluralRules(this.locale.intl);
    const number = new Intl.NumberFormat(this.locale.intl);
    const parts: string[] = [];
    units.forEach((unit, i) => {
      const raw = match[i + 1];
      if (raw === undefined) return;
      const n = Number(raw);
      const key = `duration_${unit}_${plural.select(n) === 'one' ? 'one' : 'other'}` as MessageKey;
      parts.push(this.t(key, { n: number.format(n) }));
    });
    if (parts.length === 0) return null;
    return new Intl.ListFormat(this.locale.intl, { style: 'long', type: 'conjunction' }).format(parts);
  }

  /** Localized name of a region code (`DE` → `Germany` / `Deutschland`). */
  region(code: string): string {
    try {
      return new Intl.DisplayNames(this.locale.intl, { type: 'region' }).of(code.toUpperCase()) ?? code;
    } catch {
      return code;
    }
  }
}

export function translator(...candidates: (string | null | undefined)[]): Translator {
  return new Translator(resolveLocale(...candidates));
}

/** The messages participant.js needs (handed over in the page's `#decision-config`). */
export const CLIENT_MESSAGE_KEYS: readonly MessageKey[] = [
  'time_left',
  'step_progress',
  'step_name_start',
  'step_name_sign_in',
  'step_name_verifying',
  'step_name_informed',
  'step_name_decision',
  'step_name_done',
  'signed_in_as',
  'code_sent',
  'code_resent',
  'sign_in_again',
  'informed_ack_required',
  'purpose_required_error',
  'counter_required',
  'done_title_recorded',
  'done_title_expired',
  'done_title_revoked',
  'done_title_cancelled',
  'done_granted',
  'done_declined',
  'done_approved',
  'done_denied',
  'done_countered',
  'done_fulfilled',
  'done_expired',
  'done_deadline',
  'done_revoked',
  'done_cancelled',
  'done_host_cancelled',
  'done_close_popup',
  'redirect_notice',
  'redirect_link',
  'deadline_warning',
  'deadline_expired',
  'error_prefix',
  'error_email_invalid',
  'error_code_invalid',
  'error_code_rejected',
  'error_network',
  'error_server',
  'error_rate_limited',
  'error_not_found',
  'error_expired',
  'error_conflict',
  'error_invalid',
  'error_unauthorized',
  'error_wrong_country',
  'error_wrong_country_person',
  'error_purposes_invalid',
  'link_blocked',
  'error_details',
  'error_reference',
];

export function clientMessages(messages: Catalogue): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of CLIENT_MESSAGE_KEYS) out[key] = messages[key];
  return out;
}
