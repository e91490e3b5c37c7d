import fc from 'fast-check';
import { APPROVAL_OUTCOMES, CONSENT_OUTCOMES, eventTypeFor } from '../decisions';
import { DomainError } from '../errors';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT, isWebhookEventType, validateWebhookEvents, webhookBody } from './events';

describe('webhook event types', () => {
  it('include every event type a completed decision emits', () => {
    for (const outcome of CONSENT_OUTCOMES) expect(isWebhookEventType(eventTypeFor('consent', outcome))).toBe(true);
    for (const outcome of APPROVAL_OUTCOMES) expect(isWebhookEventType(eventTypeFor('approval', outcome))).toBe(true);
  });

  it('include the other events the specification names', () => {
    for (const type of ['consent.revoked', 'consent.purpose_revoked', 'flow.activated', 'signature.signed', 'signature.declined', 'signature.expired', 'signature.countered']) {
      expect(isWebhookEventType(type)).toBe(true);
    }
  });

  it('do not include the test event, internal events or near misses', () => {
    for (const type of [WEBHOOK_TEST_EVENT, 'decision.state_changed', 'decision.ended', 'Consent.Granted', 'consent.granted ', '', 'toString', '__proto__']) {
      expect(isWebhookEventType(type)).toBe(false);
    }
  });

  it('are unique', () => {
    expect(new Set(WEBHOOK_EVENT_TYPES).size).toBe(WEBHOOK_EVENT_TYPES.length);
  });
});

describe('validateWebhookEvents', () => {
  it('returns the known types without duplicates, in order', () => {
    expect(validateWebhookEvents(['flow.activated', 'consent.granted', 'flow.activated'])).toEqual(['flow.activated', 'consent.granted']);
  });

  it('refuses anything but a non-empty array of known types, naming each bad item', () => {
    const details = (input: unknown) => {
      try {
        validateWebhookEvents(input);
      } catch (error) {
        expect(error).toBeInstanceOf(DomainError);
        return (error as DomainError).details;
      }
      throw new Error('accepted');
    };
    expect(details('consent.granted')).toEqual([{ field: 'events', reason: 'must be an array of event types' }]);
    expect(details([])).toEqual([{ field: 'events', reason: 'must name at least one event type' }]);
    expect(details(['consent.granted', 'webhook.test', 7])).toEqual([
      { field: 'events[1]', reason: expect.stringContaining('"webhook.test" is not an event type') },
      { field: 'events[2]', reason: expect.stringContaining('7 is not an event type') },
    ]);
  });

  it('accepts exactly the subsets of the known types', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...WEBHOOK_EVENT_TYPES), fc.string()), { minLength: 1 }), (events) => {
        if (events.every(isWebhookEventType)) expect(validateWebhookEvents(events)).toEqual([...new Set(events)]);
        else expect(() => validateWebhookEvents(events)).toThrow(DomainError);
      }),
    );
  });
});

describe('webhookBody', () => {
  const input = {
    event: 'consent.granted',
    id: 'evt_1',
    createdAt: '2030-01-01T00:00:00.000Z',
    applicationId: 'app_us_1',
    data: { flow_id: 'flw_1', consent_token: 'tok' },
  };

  it('serialises event, id, created_at, application_id, data in that order', () => {
    expect(webhookBody(input)).toBe(
      '{"event":"consent.granted","id":"evt_1","created_at":"2030-01-01T00:00:00.000Z","application_id":"app_us_1","data":{"flow_id":"flw_1","consent_token":"tok"}}',
    );
  });

  it('round-trips through JSON.parse for any JSON data', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (data) => {
        const body = webhookBody({ ...input, data });
        const parsed = JSON.parse(body);
        expect(Object.keys(parsed)).toEqual(['event', 'id', 'created_at', 'application_id', 'data']);
        expect(JSON.stringify(parsed.data)).toBe(JSON.stringify(data));
      }),
    );
  });

  it('refuses a missing field or non-object data instead of signing a body without it', () => {
    expect(() => webhookBody({ ...input, id: '' })).toThrow(TypeError);
    expect(() => webhookBody({ ...input, applicationId: undefined as never })).toThrow(TypeError);
    expect(() => webhookBody({ ...input, data: [] as never })).toThrow(TypeError);
    expect(() => webhookBody({ ...input, data: null as never })).toThrow(TypeError);
  });
});
