/** HTML building with escaping by default: every interpolated value is escaped unless it is `SafeHtml`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (c) => ESCAPES[c]);
}

/** Marks trusted markup (never pass view data through this). */
export function raw(value: string): SafeHtml {
  return new SafeHtml(value);
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value);
}

/** Tagged template: `html\`<p>${text}</p>\`` escapes `text`; nested `html` results pass through. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/** Joins fragments (skipping empty ones). */
export function join(parts: readonly (SafeHtml | null | undefined | false)[], separator = ''): SafeHtml {
  return new SafeHtml(parts.filter((p): p is SafeHtml => p instanceof SafeHtml).map((p) => p.value).join(separator));
}

/**
 * JSON for a `<script type="application/json">` element: `<`, `>` and `&` become `\u003c`, `\u003e`,
 * `\u0026` (so `</script>` or `<!--` cannot end the element) and U+2028/U+2029 are escaped too.
 * `JSON.parse(element.textContent)` gives the value back unchanged.
 */
export function jsonForScript(value: unknown): SafeHtml {
  const json = JSON.stringify(value ?? null)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  return new SafeHtml(json);
}

/** An `http:`/`https:` URL, or null (keeps `javascript:` and friends out of `href`). */
export function safeUrl(value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

/** A value usable in an `id` attribute: ASCII letters, digits, `-` and `_`. */
export function idFragment(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.codePointAt(0)?.toString(16)}_`);
}
