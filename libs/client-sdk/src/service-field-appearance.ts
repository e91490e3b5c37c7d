/*
 * The consent field's appearance: the bounded vocabulary of the `appearance` attribute. The element
 * reads it and hands it to the frame by postMessage (never to the service, never in the frame's URL);
 * the frame checks it again and applies it as CSS custom properties through the CSSOM, which the
 * frame's style-src policy allows. A value outside the vocabulary is ignored, never guessed at.
 *
 * Bounds (so that the wording stays legible whatever the host asks for): colours are opaque
 * (`#rgb`, `#rrggbb`, `rgb()`, `hsl()`, or a CSS colour name where the browser knows it); sizes are
 * px, rem or em (a number is px): fontSize 12 to 24 px (0.75 to 1.5 rem/em), radius 0 to 24 px
 * (0 to 1.5 rem/em).
 */

export const FONT_FAMILIES = {
  system: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif',
  // Inter when the person has it installed: the frame loads no third-party font.
  inter: 'Inter, "Inter var", system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif',
  serif: 'Georgia, Cambria, "Times New Roman", "Noto Serif", Times, serif',
  mono: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", "Noto Sans Mono", monospace',
} as const;
export type FontFamily = keyof typeof FONT_FAMILIES;

export const DENSITIES = ['compact', 'regular', 'relaxed'] as const;
export type Density = (typeof DENSITIES)[number];

export const APPEARANCE_KEYS = ['fontFamily', 'fontSize', 'text', 'muted', 'accent', 'border', 'radius', 'density'] as const;
export type AppearanceKey = (typeof APPEARANCE_KEYS)[number];

export interface FieldAppearance {
  fontFamily?: FontFamily;
  /** A CSS length (normalised: `16px`, `1rem`). */
  fontSize?: string;
  text?: string;
  muted?: string;
  accent?: string;
  border?: string;
  radius?: string;
  density?: Density;
}

export interface ParsedAppearance {
  appearance: FieldAppearance;
  /** The keys whose value was ignored (`appearance` itself when it is not a JSON object). */
  ignored: string[];
}

const COLOR_KEYS = ['text', 'muted', 'accent', 'border'] as const;
const SIZE_BOUNDS: Record<'fontSize' | 'radius', { px: [number, number]; rem: [number, number] }> = {
  fontSize: { px: [12, 24], rem: [0.75, 1.5] },
  radius: { px: [0, 24], rem: [0, 1.5] },
};

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
const NUMBER = '(?:\\d{1,3}(?:\\.\\d+)?|\\.\\d+)';
const PERCENT = `${NUMBER}%`;
const HUE = `${NUMBER}(?:deg)?`;
const RGB = new RegExp(`^rgb\\(\\s*(?:${NUMBER}\\s*,\\s*${NUMBER}\\s*,\\s*${NUMBER}|${PERCENT}\\s*,\\s*${PERCENT}\\s*,\\s*${PERCENT}|${NUMBER}\\s+${NUMBER}\\s+${NUMBER}|${PERCENT}\\s+${PERCENT}\\s+${PERCENT})\\s*\\)$`, 'i');
const HSL = new RegExp(`^hsl\\(\\s*(?:${HUE}\\s*,\\s*${PERCENT}\\s*,\\s*${PERCENT}|${HUE}\\s+${PERCENT}\\s+${PERCENT})\\s*\\)$`, 'i');
const NAME = /^[a-z]{3,20}$/i;
/** Names that are no colour of their own (or an invisible one). */
const NOT_A_COLOUR = new Set(['transparent', 'currentcolor', 'inherit', 'initial', 'unset', 'revert', 'none']);

type Supports = (property: string, value: string) => boolean;

function browserSupports(): Supports | undefined {
  const css = (globalThis as { CSS?: { supports?: Supports } }).CSS;
  return typeof css?.supports === 'function' ? (property, value) => css.supports!(property, value) : undefined;
}

/** An opaque CSS colour of the vocabulary, normalised (trimmed, hex in lower case), or undefined. */
export function appearanceColor(value: unknown, supports: Supports | undefined = browserSupports()): string | undefined {
  if (typeof value !== 'string') return undefined;
  const color = value.trim();
  if (color.length > 64) return undefined;
  if (HEX.test(color)) return color.toLowerCase();
  if (RGB.test(color) || HSL.test(color)) {
    const channels = color.slice(4, -1).split(/[\s,]+/).filter(Boolean);
    // rgb() channels up to 255 (or 100%); saturation and lightness up to 100%.
    const ok = color.toLowerCase().startsWith('rgb')
      ? channels.every((channel) => (channel.endsWith('%') ? parseFloat(channel) <= 100 : parseFloat(channel) <= 255))
      : channels.slice(1).every((channel) => parseFloat(channel) <= 100);
    return ok ? color : undefined;
  }
  if (NAME.test(color) && !NOT_A_COLOUR.has(color.toLowerCase()) && supports?.('color', color)) return color.toLowerCase();
  return undefined;
}

/** A CSS length within the key's bounds (a number is px), normalised, or undefined. */
export function appearanceSize(value: unknown, key: 'fontSize' | 'radius'): string | undefined {
  let amount: number;
  let unit: 'px' | 'rem' | 'em';
  if (typeof value === 'number') {
    amount = value;
    unit = 'px';
  } else if (typeof value === 'string') {
    const match = /^\s*(\d{1,3}(?:\.\d{1,3})?|\.\d{1,3})\s*(px|rem|em)\s*$/i.exec(value);
    if (!match) return undefined;
    amount = Number(match[1]);
    unit = match[2].toLowerCase() as 'px' | 'rem' | 'em';
  } else {
    return undefined;
  }
  if (!Number.isFinite(amount)) return undefined;
  const [min, max] = SIZE_BOUNDS[key][unit === 'px' ? 'px' : 'rem'];
  if (amount < min || amount > max) return undefined;
  return `${amount}${unit}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The valid part of an `appearance` value (the attribute's JSON text, or an object): every key of the
 * vocabulary with a valid value; the others are listed in `ignored` (unknown keys too).
 */
export function parseAppearance(value: unknown, supports: Supports | undefined = browserSupports()): ParsedAppearance {
  if (value === null || value === undefined || value === '') return { appearance: {}, ignored: [] };
  let input = value;
  if (typeof input === 'string') {
    try {
      input = JSON.parse(input);
    } catch {
      return { appearance: {}, ignored: ['appearance'] };
    }
  }
  if (!isPlainObject(input)) return { appearance: {}, ignored: ['appearance'] };
  const appearance: FieldAppearance = {};
  const ignored: string[] = [];
  for (const [key, raw] of Object.entries(input)) {
    switch (key) {
      case 'fontFamily':
        if (typeof raw === 'string' && Object.prototype.hasOwnProperty.call(FONT_FAMILIES, raw)) appearance.fontFamily = raw as FontFamily;
        else ignored.push(key);
        break;
      case 'density':
        if ((DENSITIES as readonly unknown[]).includes(raw)) appearance.density = raw as Density;
        else ignored.push(key);
        break;
      case 'fontSize':
      case 'radius': {
        const size = appearanceSize(raw, key);
        if (size) appearance[key] = size;
        else ignored.push(key);
        break;
      }
      case 'text':
      case 'muted':
      case 'accent':
      case 'border': {
        const color = appearanceColor(raw, supports);
        if (color) appearance[key] = color;
        else ignored.push(key);
        break;
      }
      default:
        ignored.push(key);
    }
  }
  return { appearance, ignored };
}

/** The CSS custom properties the frame's stylesheet reads for an appearance (`--cf-…`). */
export function appearanceProperties(appearance: FieldAppearance): Record<string, string> {
  const properties: Record<string, string> = {};
  if (appearance.fontFamily) properties['--cf-font'] = FONT_FAMILIES[appearance.fontFamily];
  if (appearance.fontSize) properties['--cf-font-size'] = appearance.fontSize;
  for (const key of COLOR_KEYS) if (appearance[key]) properties[`--cf-${key}`] = appearance[key]!;
  if (appearance.radius) properties['--cf-radius'] = appearance.radius;
  return properties;
}
