import { pinnedVersionIssue, versionInForce } from './version-in-force';

describe('the flow version in force at a capture time', () => {
  const at = (text: string) => Date.parse(text);
  // Version 1 activated in January, version 2 in June; version 3 is a draft (not listed: never activated).
  const activations = [
    { version: 1, activatedAt: at('2026-01-10T00:00:00.000Z') },
    { version: 2, activatedAt: at('2026-06-10T00:00:00.000Z') },
  ];

  it('is the newest version activated at or before the capture', () => {
    expect(versionInForce(activations, at('2026-03-01T00:00:00.000Z'))).toBe(1);
    expect(versionInForce(activations, at('2026-06-09T23:59:59.999Z'))).toBe(1);
    expect(versionInForce(activations, at('2026-06-10T00:00:00.000Z'))).toBe(2);
    expect(versionInForce(activations, at('2027-01-01T00:00:00.000Z'))).toBe(2);
  });

  it('is the first activated version for a capture before every activation (history from before the service)', () => {
    expect(versionInForce(activations, at('2020-01-01T00:00:00.000Z'))).toBe(1);
    expect(versionInForce([{ version: 4, activatedAt: at('2026-01-10T00:00:00.000Z') }, { version: 5, activatedAt: at('2026-02-10T00:00:00.000Z') }], 0)).toBe(4);
  });

  it('is none for a flow never activated, whatever order the versions are listed in', () => {
    expect(versionInForce([], at('2026-03-01T00:00:00.000Z'))).toBeUndefined();
    expect(versionInForce([...activations].reverse(), at('2026-07-01T00:00:00.000Z'))).toBe(2);
    expect(versionInForce([...activations].reverse(), at('2020-07-01T00:00:00.000Z'))).toBe(1);
  });

  it('takes a pinned version only when it was activated, and not for a capture before its activation unless it is the first', () => {
    expect(pinnedVersionIssue(activations, 1, at('2020-01-01T00:00:00.000Z'))).toBeUndefined();
    expect(pinnedVersionIssue(activations, 1, at('2027-01-01T00:00:00.000Z'))).toBeUndefined();
    expect(pinnedVersionIssue(activations, 2, at('2026-06-10T00:00:00.000Z'))).toBeUndefined();
    expect(pinnedVersionIssue(activations, 2, at('2026-06-09T23:59:59.999Z'))).toEqual({
      field: 'captured_at',
      reason: 'is before version 2 of the flow was activated (2026-06-10T00:00:00.000Z): it cannot have been shown then; version 1 was in force',
    });
    expect(pinnedVersionIssue(activations, 3, at('2026-07-01T00:00:00.000Z'))).toEqual({ field: 'flow_version', reason: 'is not an activated version of this flow (activated: 1, 2)' });
    expect(pinnedVersionIssue([], 1, at('2026-07-01T00:00:00.000Z'))).toEqual({ field: 'flow_version', reason: 'is not an activated version of this flow (activated: none)' });
  });
});
