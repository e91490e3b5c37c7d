import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { OutboxRelay } from '../outbox/outbox';
import { ParticipantSteps } from './participant-steps';
import { SessionsRepository } from './sessions.repository';

const BATCH = 500;

/**
 * Ends in-flight sessions whose time (lifetime or deadline) has passed, so that lists, webhooks and
 * the audit trail see them expire without anyone opening them. Reads expire lazily as well.
 */
@Injectable()
export class SessionExpiry {
  private readonly logger = new Logger(SessionExpiry.name);
  private busy = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly sessions: SessionsRepository,
    private readonly steps: ParticipantSteps,
    private readonly relay: OutboxRelay,
  ) {}

  @Interval(2000)
  async sweep(): Promise<number> {
    if (this.busy) return 0;
    this.busy = true;
    try {
      const expired = await this.dataSource.transaction(async (manager) => {
        const overdue = await this.sessions.lockOverdue(manager, new Date(), BATCH);
        for (const session of overdue) {
          await this.steps.expire(manager, session, { type: 'system' }, session.deadlineAt ? 'deadline' : 'time');
        }
        return overdue.length;
      });
      if (expired > 0) this.relay.kick();
      return expired;
    } catch (error) {
      this.logger.warn(`expiry sweep failed: ${(error as Error).message}`);
      return 0;
    } finally {
      this.busy = false;
    }
  }
}
