import { outboxDeletesRelayedRows } from '@dcr/service-kit';

/** The outbox keeps only events not yet relayed: the relay deletes what it relayed (libs/service-kit, OutboxRelay). */
export const OutboxDeletesRelayedRows1765000000000 = outboxDeletesRelayedRows('decisions');
