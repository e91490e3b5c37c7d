/*
 * Text a person reads before they decide (an approval's title, action and description, the agent's
 * name): what would make it say something other than what is stored is refused. Bidirectional
 * controls reorder what is shown ("Refund \u202e0001$" reads as "Refund $1000"), control characters
 * and invisible spaces hide or split it, and a blank title is a link with no name.
 */

/** Bidirectional embedding, override and isolate controls, and the marks (LRM, RLM, ALM). */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
/** C0 and C1 controls; in text of several lines, tab and line breaks are allowed. */
const CONTROLS_ONE_LINE = /[\u0000-\u001F\u007F-\u009F]/u;
const CONTROLS_MULTILINE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;
/** Invisible spaces that split a word without showing (zero-width space, word joiner, BOM); joiners in emoji stay. */
const INVISIBLE = /[\u200B\u2060\uFEFF]/u;
/** An unpaired surrogate: not text, it cannot be kept as given. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;

export interface DisplayTextRule {
  /** Tabs and line breaks allowed (a description). */
  multiline?: boolean;
  /** An empty or blank value allowed (an optional description). */
  blankAllowed?: boolean;
}

/** Why `value` cannot be shown to a person as it is stored, or undefined when it can. */
export function displayTextProblem(value: unknown, rule: DisplayTextRule = {}): string | undefined {
  if (typeof value !== 'string') return 'must be text';
  if (LONE_SURROGATE.test(value)) return 'must be Unicode text (it holds an unpaired surrogate)';
  if (BIDI_CONTROLS.test(value)) return 'must not contain bidirectional control characters (they reorder what the person reads)';
  if ((rule.multiline ? CONTROLS_MULTILINE : CONTROLS_ONE_LINE).test(value)) return rule.multiline ? 'must not contain control characters other than tabs and line breaks' : 'must not contain control characters';
  if (INVISIBLE.test(value)) return 'must not contain invisible characters (zero-width space, word joiner, byte order mark)';
  if (!rule.blankAllowed && value.trim().length === 0) return 'must not be blank';
  return undefined;
}

const CURRENCY_NAMES = new Intl.DisplayNames(['en'], { type: 'currency' });

/** An ISO 4217 currency code the runtime knows (EUR, JPY, CLF, XAU): a made-up one (XYZ) is no currency a person can read. */
export function isKnownCurrency(value: unknown): boolean {
  if (typeof value !== 'string' || !/^[A-Z]{3}$/.test(value)) return false;
  return CURRENCY_NAMES.of(value) !== value;
}
