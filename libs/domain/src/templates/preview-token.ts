import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../errors';

/*
 * The preview link of a preview template is `<flow host>/preview/<token>`. The token is the link's
 * only credential: whoever holds it sees the template's flow version as its decision page (nothing
 * else, and nothing is recorded) for ten minutes. It is short enough for a path segment (84
 * characters) and readable:
 *
 *   <template id>.<device d|m><theme l|d>.<expiry, Unix seconds>.<HMAC-SHA256, base64url>
 *
 * The MAC covers `service-template-preview.v1|<template id>|<flags>|<expiry>` under the country's
 * preview key. The template row (kept by the decisions service) names the application, the flow and
 * the version, so deleting the template ends its links at once. Device and theme are the page's
 * defaults; the link's query parameters may override them.
 */

/** How long a preview link works. */
export const PREVIEW_TOKEN_LIFETIME_SECONDS = 600;
/** Clock skew tolerated between the gateway replicas of a country. */
const CLOCK_TOLERANCE_SECONDS = 30;
const MAC_CONTEXT = 'service-template-preview.v1';

export const PREVIEW_DEVICES = ['desktop', 'mobile'] as const;
export const PREVIEW_THEMES = ['light', 'dark'] as const;
export type PreviewDevice = (typeof PREVIEW_DEVICES)[number];
export type PreviewTheme = (typeof PREVIEW_THEMES)[number];

const DEVICE_FLAGS: Readonly<Record<PreviewDevice, string>> = { desktop: 'd', mobile: 'm' };
const THEME_FLAGS: Readonly<Record<PreviewTheme, string>> = { light: 'l', dark: 'd' };
const TOKEN = /^(tpl_[a-z]{2}[0-9a-z]{20})\.([dm])([ld])\.([1-9][0-9]{0,11})\.([A-Za-z0-9_-]{43})$/;

/** What a preview link states. */
export interface PreviewTokenFacts {
  template_id: string;
  device: PreviewDevice;
  theme: PreviewTheme;
}

export interface VerifiedPreviewToken extends PreviewTokenFacts {
  /** ISO 8601 UTC. */
  expires_at: string;
}

const invalid = (reason: string) => new DomainError('not_found', `This preview link is not valid: ${reason}`);
const expired = () => new DomainError('gone', 'This preview link has expired (links last 10 minutes): ask for a new preview');

function mac(key: Uint8Array, templateId: string, flags: string, expiry: number): Buffer {
  return createHmac('sha256', key).update(`${MAC_CONTEXT}|${templateId}|${flags}|${expiry}`, 'utf8').digest();
}

/** A preview link's token, signed at `now` with `key`, valid for ten minutes. */
export function signPreviewToken(facts: PreviewTokenFacts, key: Uint8Array, now = new Date()): { token: string; expiresAt: string } {
  if (!/^tpl_[a-z]{2}[0-9a-z]{20}$/.test(facts.template_id)) throw new RangeError(`not a template id: ${facts.template_id}`);
  if (!PREVIEW_DEVICES.includes(facts.device) || !PREVIEW_THEMES.includes(facts.theme)) throw new RangeError('device or theme out of range');
  const expiry = Math.floor(now.getTime() / 1000) + PREVIEW_TOKEN_LIFETIME_SECONDS;
  const flags = DEVICE_FLAGS[facts.device] + THEME_FLAGS[facts.theme];
  const token = `${facts.template_id}.${flags}.${expiry}.${mac(key, facts.template_id, flags, expiry).toString('base64url')}`;
  return { token, expiresAt: new Date(expiry * 1000).toISOString() };
}

/**
 * The facts of a preview token signed with `key`. An expired one is `gone` (410); a forged, altered,
 * malformed one, or one that claims more than ten minutes, is `not_found` (404), saying why. The
 * signature is checked first, so a forged link is never told apart by its age.
 */
export function verifyPreviewToken(token: string, key: Uint8Array, now = new Date()): VerifiedPreviewToken {
  const match = typeof token === 'string' ? TOKEN.exec(token) : null;
  if (!match) throw invalid('it is not a preview token');
  const [, templateId, deviceFlag, themeFlag, expiryText, signature] = match;
  const expiry = Number(expiryText);
  const expected = mac(key, templateId, deviceFlag + themeFlag, expiry);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || given.toString('base64url') !== signature || !timingSafeEqual(given, expected)) {
    throw invalid('its signature does not verify (forged, altered or made by another country)');
  }
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (expiry > nowSeconds + PREVIEW_TOKEN_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS) throw invalid('it claims to last longer than ten minutes');
  if (nowSeconds >= expiry + CLOCK_TOLERANCE_SECONDS) throw expired();
  return {
    template_id: templateId,
    device: deviceFlag === 'm' ? 'mobile' : 'desktop',
    theme: themeFlag === 'd' ? 'dark' : 'light',
    expires_at: new Date(expiry * 1000).toISOString(),
  };
}
