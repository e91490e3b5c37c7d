import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { DECISIONS_EVENT, DecisionEventMessage } from '@dcr/contracts';
import { newOpaqueId } from '@dcr/domain';
import { ServiceClients } from '@dcr/service-kit';
import { DataSource, EntityManager } from 'typeorm';
import { OutboxEvent } from './outbox-event.entity';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

export interface NewOutboxEvent {
  type: string;
  applicationId: string;
  data: Record<string, unknown>;
  /** Audit-only facts (state changes and their actor), never sent to webhooks. */
  internal?: boolean;
  occurredAt?: Date;
}

/** The outbox row of an event, unpublished. */
export function outboxRow(event: NewOutboxEvent): OutboxEvent {
  return Object.assign(new OutboxEvent(), {
    id: newOpaqueId('evt', 20),
    type: event.type,
    applicationId: event.applicationId,
    internal: event.internal ?? false,
    data: event.data,
    occurredAt: event.occurredAt ?? new Date(),
    publishedAt: null,
  });
}

/** Writes events inside the caller's transaction: the event commits with the change or not at all. */
export function recordEvent(manager: EntityManager, event: NewOutboxEvent): Promise<unknown> {
  return manager.insert(OutboxEvent, outboxRow(event) as QueryDeepPartialEntity<OutboxEvent>);
}

const BATCH = 200;
/** How long a kick waits for more events to publish together. */
const COALESCE_MS = 5;

/**
 * Publishes committed outbox rows to the country's transport (`decisions.event`) and marks them.
 * Rows are claimed with `FOR UPDATE SKIP LOCKED`, so several replicas never publish the same row at
 * once; a crash between publishing and marking publishes the row again (at least once; consumers
 * deduplicate by event id).
 */
@Injectable()
export class OutboxRelay implements OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private running?: Promise<void>;
  private again = false;
  private scheduled?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly clients: ServiceClients,
  ) {}

  /**
   * Called after a commit that wrote events, so they leave within milliseconds instead of at the
   * next tick. Kicks within a few milliseconds share one drain, so a busy service publishes in
   * batches rather than one transaction per event.
   */
  kick(): void {
    if (this.closed || this.scheduled) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.scheduled = setTimeout(() => {
      this.scheduled = undefined;
      this.running = this.drain().finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
    }, COALESCE_MS);
  }

  @Interval(1000)
  tick(): void {
    this.kick();
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        const published = await this.dataSource.transaction(async (manager) => {
          const rows = await manager
            .createQueryBuilder(OutboxEvent, 'e')
            .where('e.published_at IS NULL')
            .orderBy('e.occurred_at', 'ASC')
            .limit(BATCH)
            .setLock('pessimistic_write')
            .setOnLocked('skip_locked')
            .getMany();
          if (rows.length === 0) return 0;
          for (const row of rows) {
            const message: DecisionEventMessage = {
              id: row.id,
              type: row.type,
              application_id: row.applicationId,
              occurred_at: row.occurredAt.toISOString(),
              data: row.data,
              internal: row.internal,
            };
            this.clients.own.emit(DECISIONS_EVENT, message).subscribe({
              error: (error) => this.logger.warn(`event ${row.id} not published: ${String(error)}`),
            });
          }
          await manager
            .createQueryBuilder()
            .update(OutboxEvent)
            .set({ publishedAt: () => 'now()' })
            .whereInIds(rows.map((row) => row.id))
            .execute();
          return rows.length;
        });
        if (published < BATCH) return;
      }
    } catch (error) {
      if (!this.closed) this.logger.warn(`outbox relay: ${(error as Error).message}`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    if (this.scheduled) clearTimeout(this.scheduled);
    await this.running;
  }
}
