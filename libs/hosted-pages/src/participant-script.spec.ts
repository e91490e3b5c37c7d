import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateFrameMessage } from '@dcr/frame-protocol';
import { assetsDir } from './assets';

/** The pure helpers participant.js exports when loaded under CommonJS. */
interface ParticipantHelpers {
  PROTOCOL_VERSION: number;
  uuidV4(crypto?: unknown): string;
  isoUtc(value: unknown): string | null;
  buildEnvelope(type: string, kind: string, payload: unknown, nowMs?: number, id?: string): Record<string, unknown>;
  stepPosition(path: string, from: string, to: string): { step_index: number; total_steps: number };
  statePayload(kind: string, path: string, from: string, to: string, extra?: unknown): Record<string, unknown>;
  dueDeadlineMark(remainingMs: number, fired: Record<number, boolean>): number | null;
  deadlinePayload(mark: number, deadlineAt: string): Record<string, unknown>;
  formatRemaining(ms: number): string;
  validOrigin(value: unknown): string | null;
  accessDeniedUrl(value: unknown): string | null;
  classifyError(error: unknown): { code: string; fatal: boolean; recoverable_via: string | null; messageKey: string };
  format(template: string, vars: Record<string, unknown>): string;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const script = require('../assets/participant.js') as ParticipantHelpers;
const source = readFileSync(join(assetsDir(), 'participant.js'), 'utf8');
const NOW = Date.parse('2025-03-01T12:00:00Z');

describe('participant.js envelopes', () => {
  const samples: [string, string, unknown][] = [
    ['service:ready', 'consent', { kind: 'consent', session_token: 'dts_x', deadline_at: script.isoUtc('2025-03-01T13:05:00+01:00'), branding: {}, mode: 'embed', locale: 'de-DE' }],
    ['service:ready', 'approval', { kind: 'approval', session_token: 'dts_x', deadline_at: null, branding: {}, mode: 'popup', locale: 'en' }],
    ['service:state', 'consent', script.statePayload('consent', 'standard', 'pending', 'authenticating')],
    ['service:state', 'consent', script.statePayload('consent', 'informed', 'evidenced', 'fulfilled')],
    ['service:state', 'approval', script.statePayload('approval', 'standard', 'verifying', 'reviewing', { action: 'refund', trigger: 'value' })],
    ['service:complete', 'consent', { outcome: 'declined', exchange_token: 'ct_1', completed_at: script.isoUtc(NOW) }],
    ['service:complete', 'approval', { outcome: 'countered', exchange_token: 'ct_2', completed_at: script.isoUtc(NOW) }],
    ['service:cancel', 'consent', { reason: 'user_cancelled', cancelled_by: 'user' }],
    ['service:cancel', 'approval', { reason: 'host_closed', cancelled_by: 'host' }],
    ['service:error', 'consent', { code: 'network_error', message: 'x', fatal: false, recoverable_via: 'retry' }],
    ['service:error', 'approval', { code: 'http_410', message: 'x', fatal: true, recoverable_via: null }],
    ['service:resize', 'consent', { height: 812 }],
    ['service:deadline', 'consent', script.deadlinePayload(30, '2025-03-01T12:05:00Z')],
    ['service:deadline', 'approval', script.deadlinePayload(0, '2025-03-01T12:05:00Z')],
  ];

  it.each(samples)('%s (%s) validates against the frame protocol schemas', (type, kind, payload) => {
    const envelope = script.buildEnvelope(type, kind, payload, NOW);
    expect(validateFrameMessage(envelope)).toEqual({ valid: true });
    expect(envelope.ts).toBe('2025-03-01T12:00:00.000Z');
  });

  it('makes UUID v4 ids with and without crypto.randomUUID', () => {
    const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(script.uuidV4()).toMatch(v4);
    const { getRandomValues } = globalThis.crypto;
    const fallback = script.uuidV4({ getRandomValues: (a: Uint8Array) => getRandomValues.call(globalThis.crypto, a) });
    expect(fallback).toMatch(v4);
  });
});

describe('participant.js countdown', () => {
  it('fires at T-30, T-15, T-5 and T-0 once each', () => {
    const fired: Record<number, boolean> = {};
    const seen: (number | null)[] = [];
    for (let remaining = 40_000; remaining >= -1_000; remaining -= 250) seen.push(script.dueDeadlineMark(remaining, fired));
    expect(seen.filter((m) => m !== null)).toEqual([30, 15, 5, 0]);
  });

  it('fires only the latest mark when several passed at once (late load or throttled timer)', () => {
    const fired: Record<number, boolean> = {};
    expect(script.dueDeadlineMark(12_000, fired)).toBe(15);
    expect(script.dueDeadlineMark(11_000, fired)).toBeNull();
    expect(script.dueDeadlineMark(-5_000, fired)).toBe(0);
    expect(script.dueDeadlineMark(-6_000, fired)).toBeNull();
  });

  it('levels: warning before, expired at 0', () => {
    expect(script.deadlinePayload(5, '2025-03-01T12:05:00Z')).toEqual({ remaining_seconds: 5, level: 'warning', deadline_at: '2025-03-01T12:05:00.000Z' });
    expect(script.deadlinePayload(0, '2025-03-01T12:05:00Z').level).toBe('expired');
  });

  it('formats the remaining time', () => {
    expect(script.formatRemaining(272_000)).toBe('4:32');
    expect(script.formatRemaining(3_605_000)).toBe('1:00:05');
    expect(script.formatRemaining(-10)).toBe('0:00');
  });
});

describe('participant.js origins, redirects and errors', () => {
  it('accepts only real origins as postMessage targets', () => {
    expect(script.validOrigin('http://localhost:4000')).toBe('http://localhost:4000');
    expect(script.validOrigin('https://shop.example/')).toBe('https://shop.example');
    for (const bad of [null, '', '*', 'null', 'https://shop.example/path', 'javascript:alert(1)', 'file:///x', 'shop.example']) {
      expect(script.validOrigin(bad)).toBeNull();
    }
  });

  it('adds error=access_denied to the redirect URI', () => {
    expect(script.accessDeniedUrl('https://shop.example/cb?state=1')).toBe('https://shop.example/cb?state=1&error=access_denied');
    expect(script.accessDeniedUrl('javascript:alert(1)')).toBeNull();
  });

  it('classifies API errors for service:error', () => {
    expect(script.classifyError({ status: 0 })).toMatchObject({ code: 'network_error', fatal: false, recoverable_via: 'retry' });
    expect(script.classifyError({ status: 422, code: 'validation_failed' })).toMatchObject({ fatal: false, recoverable_via: 'user_input' });
    expect(script.classifyError({ status: 410, code: 'gone' })).toMatchObject({ fatal: true, recoverable_via: null, messageKey: 'error_expired' });
    expect(script.classifyError({ status: 421, code: 'wrong_country' })).toMatchObject({ fatal: true, messageKey: 'error_wrong_country' });
    expect(script.classifyError({ status: 429 })).toMatchObject({ code: 'http_429', messageKey: 'error_rate_limited' });
  });
});

describe('participant.js source rules', () => {
  it('never posts to a wildcard origin and never injects HTML', () => {
    expect(source).not.toMatch(/postMessage\([^)]*['"]\*['"]/);
    expect(source).toMatch(/target\.postMessage\(buildEnvelope\(type, kind, payload, serverNow\(\)\), origin\)/);
    expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
  });

  it('defines no globals', () => {
    const body = source.replace(/\/\*[\s\S]*?\*\//g, '').trim();
    expect(body.startsWith("'use strict';\n\n(function () {")).toBe(true);
    expect(body.endsWith('})();')).toBe(true);
    expect(source).not.toMatch(/\bwindow\.[A-Za-z_$]+\s*=[^=]/);
  });

  it('is ES2020 syntax without a build step', () => {
    // Parses as a classic script (no import/export, no top-level await).
    expect(() => new Function(source)).not.toThrow();
    expect(source).not.toMatch(/^\s*(import|export)\s/m);
  });
});
