import { outboxRelaysByEventId } from '@dcr/service-kit';

/** The relay takes outbox rows by id (time-ordered event ids), so the index on occurred_at goes (libs/service-kit, outboxRelaysByEventId). */
export const OutboxRelaysByEventId1765300000000 = outboxRelaysByEventId('gateway');
