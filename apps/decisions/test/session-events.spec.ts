import 'reflect-metadata';
import { RECEIPTS_INGEST, WEBHOOKS_ENQUEUE } from '@dcr/contracts';
import { ServiceClients } from '@dcr/service-kit';
import { CountryClient } from '@dcr/transport';
import { of } from 'rxjs';
import { DataSource } from 'typeorm';
import { OutboxRelay, outboxRow } from '../src/outbox/outbox';
import { DecisionSession } from '../src/sessions/decision-session.entity';
import { transitionEvent } from '../src/sessions/session-events';

/**
 * A session's state changes are audit-only facts: the trail gets them (with their actor), webhooks
 * and receipts do not. The outbox rows themselves are deleted once relayed, so this is checked where
 * the rows are made and where the relay hands a batch on.
 */
describe('state changes are internal events', () => {
  const session = Object.assign(new DecisionSession(), { id: 'dcs_us_1', applicationId: 'tp_us_app', kind: 'consent', flowId: 'flw_us_1', flowVersion: 2 });

  it('marks a transition event internal and names its actor', () => {
    const at = new Date('2026-11-23T10:00:00.000Z');
    expect(transitionEvent(session, 'pending', 'authenticating', { type: 'participant' }, at)).toEqual({
      type: 'decision.state_changed',
      applicationId: 'tp_us_app',
      internal: true,
      occurredAt: at,
      data: { session_id: 'dcs_us_1', kind: 'consent', from: 'pending', to: 'authenticating', actor: { type: 'participant' }, flow_id: 'flw_us_1', flow_version: 2 },
    });
  });

  it('hands only public events of a relayed batch to webhooks, and consent outcomes to receipts', async () => {
    const sent: Array<{ pattern: string; events: Array<{ type: string }> }> = [];
    const own = {
      send: (pattern: string, request: { events: Array<{ type: string }> }) => {
        sent.push({ pattern, events: request.events });
        return of({});
      },
    };
    const relay = new OutboxRelay({} as DataSource, new ServiceClients(own as unknown as CountryClient, new Map()));
    const rows = [
      outboxRow(transitionEvent(session, 'reviewing', 'fulfilled', { type: 'participant' }, new Date())),
      outboxRow({ type: 'consent.granted', applicationId: 'tp_us_app', data: { record_id: 'rec_us_1' } }),
      outboxRow({ type: 'flow.activated', applicationId: 'tp_us_app', data: { flow_id: 'flw_us_1' } }),
    ];
    await (relay as unknown as { afterAppend(rows: unknown[]): Promise<void> }).afterAppend(rows);
    expect(sent.find((call) => call.pattern === WEBHOOKS_ENQUEUE)?.events.map((event) => event.type)).toEqual(['consent.granted', 'flow.activated']);
    expect(sent.find((call) => call.pattern === RECEIPTS_INGEST)?.events.map((event) => event.type)).toEqual(['consent.granted']);
  });
});
