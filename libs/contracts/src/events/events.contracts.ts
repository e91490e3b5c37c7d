import { IsISO8601, IsObject, Matches } from 'class-validator';
import { APPLICATION_ID } from '../patterns';

/**
 * A committed event as a producer's outbox relay hands it to its consumers (the webhooks queue, the
 * receipts service): the outbox row's id, type, application, time and data. Consumers recognise a
 * redelivery by the id.
 */
export class OutboxEventInput {
  @Matches(/^evt_[0-9a-z]{20}$/)
  id: string;

  @Matches(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/)
  type: string;

  @Matches(APPLICATION_ID)
  application_id: string;

  @IsISO8601({ strict: true })
  occurred_at: string;

  @IsObject()
  data: Record<string, unknown>;
}
