import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AUDIT_APPEND, AuditActor, AuditAppendReply, AuditAppendRequest } from '@dcr/contracts';
import { DomainError, newEventId } from '@dcr/domain';
import { entityFromRow, JsonRecordset, PreparedStatement } from '@dcr/persistence';
import { firstValueFrom, timeout } from 'rxjs';
import { DataSource, EntityManager } from 'typeorm';
import { ServiceClients } from '../service-clients';
import { OutboxEvent } from './outbox-event.entity';

export interface NewOutboxEvent {
  type: string;
  applicationId: string;
  data: Record<string, unknown>;
  /** Audit-only facts (state changes and their actor), never sent to webhooks. */
  internal?: boolean;
  occurredAt?: Date;
}

/** The outbox row of an event, not yet relayed. */
export function outboxRow(event: NewOutboxEvent): OutboxEvent {
  return Object.assign(new OutboxEvent(), {
    id: newEventId(),
    type: event.type,
    applicationId: event.applicationId,
    internal: event.internal ?? false,
    data: event.data,
    occurredAt: event.occurredAt ?? new Date(),
  });
}

/** Writes events inside the caller's transaction: the event commits with the change or not at all. */
export function recordEvent(manager: EntityManager, event: NewOutboxEvent): Promise<unknown> {
  return insertOutboxRows(manager, [outboxRow(event)]);
}

/** New outbox rows as the JSON document their insert reads. */
const OUTBOX_ROWS = new JsonRecordset<OutboxEvent>([
  { key: 'id', read: (row) => row.id },
  { key: 'type', read: (row) => row.type },
  { key: 'application_id', read: (row) => row.applicationId },
  { key: 'internal', read: (row) => row.internal, type: 'boolean' },
  { key: 'data', read: (row) => row.data, type: 'jsonb' },
  { key: 'occurred_at', read: (row) => row.occurredAt, type: 'timestamptz' },
]);

/**
 * Inserts outbox rows (from `outboxRow`) in the caller's transaction, any number in one statement:
 * the rows travel as one JSON document (`jsonb_to_recordset`), so the statement's text is the same
 * for one row or five hundred and is prepared once per connection, and no row is escaped into an
 * array literal on the way.
 */
export async function insertOutboxRows(manager: EntityManager, rows: OutboxEvent[]): Promise<void> {
  if (rows.length === 0) return;
  await outboxStatements(manager.connection).insert.run(manager, [outboxDocument(rows)]);
}

/**
 * The outbox insert of the rows in the JSON document of parameter `$<parameter>`, for a statement of
 * the caller's that writes them together with its own change (after a data-modifying `WITH`), so
 * that the change and its events take one round trip. The same insert as `insertOutboxRows`.
 */
export function outboxInsertSql(dataSource: DataSource, parameter: number): string {
  const { schema, tableName } = dataSource.getMetadata(OutboxEvent);
  const table = schema ? `"${schema}"."${tableName}"` : `"${tableName}"`;
  return `INSERT INTO ${table} ("id", "type", "application_id", "internal", "data", "occurred_at")
       SELECT "id", "type", "application_id", "internal", "data", "occurred_at"
         FROM jsonb_to_recordset($${parameter}::jsonb) AS r(${OUTBOX_ROWS.columns})`;
}

/** Outbox rows (from `outboxRow`) as the JSON document `outboxInsertSql` reads. */
export function outboxDocument(rows: OutboxEvent[]): string {
  return OUTBOX_ROWS.document(rows);
}

/** The actor an event names in its data (`data.actor`), if any. */
export function declaredActor(data: Record<string, unknown>): AuditActor | null {
  const actor = data.actor as { type?: unknown; id?: unknown } | undefined;
  if (!actor || typeof actor.type !== 'string') return null;
  return { type: actor.type as AuditActor['type'], ...(typeof actor.id === 'string' ? { id: actor.id } : {}) };
}

/**
 * Rows per transaction at most. Events of the usual size (under 2 KB) keep one append request well
 * under NATS's default 1 MiB payload; a batch of larger ones that the bus refuses is halved (drain).
 */
const BATCH = 200;
/** How long a kick waits for more events to relay together. */
const COALESCE_MS = 5;
/** How long the relay waits for the audit trail to confirm a batch before it tries again later. */
const AUDIT_TIMEOUT_MS = 10_000;
/** Rows left behind (a lost kick, a failed batch, another replica's crash) are picked up this often. */
const SWEEP_MS = 1000;
/**
 * How long an event a consumer refused is set aside at first; each refusal after doubles it, up to
 * PARK_MAX_MS: short enough that events a consumer refused during an outage of its own (answered
 * with its errors, not timeouts) leave within minutes of its recovery.
 */
const PARK_MS = 30_000;
const PARK_MAX_MS = 600_000;

const statementsBySource = new WeakMap<DataSource, ReturnType<typeof createOutboxStatements>>();

/** The outbox statements of one service's data source (its own schema's `outbox` table). */
function outboxStatements(dataSource: DataSource): ReturnType<typeof createOutboxStatements> {
  let statements = statementsBySource.get(dataSource);
  if (!statements) {
    statements = createOutboxStatements(dataSource);
    statementsBySource.set(dataSource, statements);
  }
  return statements;
}

/**
 * The outbox's statements on one service's table, prepared: every state change writes a row, the
 * relay claims rows for every batch, and its sweep claims every second. Claiming takes the oldest
 * rows (by id: an event's id starts with the time it was made, see newEventId), skips rows another
 * replica holds, and deletes them in the same statement: the deletion commits with the relay's
 * transaction, after the audit trail answered, and a failure rolls it back with the rest.
 */
function createOutboxStatements(dataSource: DataSource) {
  const { schema, tableName } = dataSource.getMetadata(OutboxEvent);
  const table = schema ? `"${schema}"."${tableName}"` : `"${tableName}"`;
  const prefix = `outbox_${(schema ?? 'public').replace(/[^a-z0-9_]/gi, '_').toLowerCase()}`;
  return {
    insert: new PreparedStatement(`${prefix}_insert`, outboxInsertSql(dataSource, 1)),
    // Planned per call: the table's size swings between empty and a backlog, and a plan kept from a
    // nearly empty table (a sequential scan is cheapest there) would scan all of a large one
    // (PreparedStatement's reusePlan). $2: the ids of events set aside (OutboxRelay's parking),
    // usually none. RETURNING gives no order: the relay sorts the rows by id.
    claim: new PreparedStatement(
      `${prefix}_claim`,
      `DELETE FROM ${table} WHERE "id" IN (SELECT "id" FROM ${table} WHERE "id" <> ALL($2::text[]) ORDER BY "id" ASC LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING *`,
      { reusePlan: false },
    ),
  };
}

/**
 * Relays a service's committed outbox rows: appends them to the country's audit trail
 * (`audit-chain.append`, request/reply), hands them to `afterAppend` (the decisions service queues
 * their webhook deliveries there), and deletes them, all in one transaction of the producer's
 * database. A row is deleted only once its audit entry is committed (the deletion commits after the
 * append answered); a crash or a failure in between leaves it, and it is sent again, and the trail
 * recognises it by its id, so every committed event reaches the trail exactly once. Rows are claimed
 * with `FOR UPDATE SKIP LOCKED`, so replicas never relay the same row at once.
 *
 * One event a consumer cannot take (it refuses it with an error of its own, not a timeout or an
 * absent service) must not hold up every event after it: when a batch is refused so, its events
 * are relayed one at a time, and each one refused alone is set aside (parked) for 30 s, doubling
 * with each refusal up to ten minutes, logged as an error with its id, while the rest go on.
 * A parked event stays in the outbox, so it is relayed once the cause is fixed; until then its audit
 * entry (if the trail took it), receipt or webhook waits. A timeout or an absent consumer stops the
 * drain as before (every event would fail alike), and the sweep tries again.
 *
 * Deleted rather than marked as published: the audit trail is where a relayed event is kept, so the
 * table stays as small as the backlog instead of growing with every event, and relaying a row writes
 * two WAL records (its lock and its deletion, about 110 bytes) instead of four (the lock, a new row
 * version and its index entry, about 740 bytes for a consent event): fewer bytes for every commit
 * to wait on (docs/performance.md, thirteenth session).
 */
export abstract class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger = new Logger(this.constructor.name);
  private running?: Promise<void>;
  private again = false;
  private scheduled?: NodeJS.Timeout;
  private sweeper?: NodeJS.Timeout;
  private closed = false;
  /** Events set aside after a consumer refused them alone: id → when to try again, and how often refused. */
  private readonly parked = new Map<string, { until: number; refusals: number }>();

  protected constructor(
    protected readonly dataSource: DataSource,
    protected readonly clients: ServiceClients,
    /** The producer's name on the trail: `(source, event id)` is what makes a redelivery a no-op. */
    private readonly source: string,
  ) {}

  /** Who caused an event, for its audit entry. */
  protected abstract actorOf(row: OutboxEvent): AuditActor;

  /**
   * Runs after the batch is on the trail and before the rows are deleted; if it throws, the rows stay
   * and the whole batch is relayed again later (the trail ignores the repeat).
   */
  protected async afterAppend(_rows: OutboxEvent[]): Promise<void> {}

  onApplicationBootstrap(): void {
    this.sweeper = setInterval(() => this.kick(), SWEEP_MS);
    this.sweeper.unref();
  }

  /**
   * Called after a commit that wrote events, so they leave within milliseconds instead of at the
   * next sweep. Kicks within a few milliseconds share one drain, so a busy service relays in batches
   * rather than one transaction per event.
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

  private async drain(): Promise<void> {
    // Rows per batch in this drain: halved while the bus refuses a batch as too large (NATS's
    // max_payload; a backlog of large events), back to BATCH at the next drain.
    let limit = BATCH;
    try {
      for (;;) {
        let relayed: number;
        const claimed: string[] = [];
        try {
          relayed = await this.relay(limit, claimed);
        } catch (error) {
          if (this.closed) throw error;
          if (tooLargeForTheBus(error) && claimed.length > 1) {
            limit = Math.ceil(claimed.length / 2);
            this.logger.warn(`outbox relay: a batch was too large for the bus (${(error as Error).message}); relaying ${limit} events at a time in this drain`);
            continue;
          }
          if (!refusedByConsumer(error)) throw error;
          this.logger.warn(`outbox relay: a batch was refused (${(error as Error).message}); relaying its events one at a time`);
          relayed = await this.relayOneAtATime();
          if (relayed < BATCH) return;
          continue;
        }
        if (relayed < limit) return;
      }
    } catch (error) {
      if (!this.closed) this.logger.warn(`outbox relay: ${(error as Error).message}`);
    }
  }

  /** Relays up to `limit` of the oldest rows not set aside, in one transaction; how many it relayed. */
  private async relay(limit: number, claimed: string[] = []): Promise<number> {
    const statements = outboxStatements(this.dataSource);
    return this.dataSource.transaction(async (manager) => {
      const metadata = manager.connection.getMetadata(OutboxEvent);
      const rows = (await statements.claim.rows(manager, [limit, this.setAside()]))
        .map((row) => entityFromRow(metadata, row, new OutboxEvent()))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      if (rows.length === 0) return 0;
      claimed.push(...rows.map((row) => row.id));
      const append: AuditAppendRequest = {
        source: this.source,
        events: rows.map((row) => ({
          id: row.id,
          type: row.type,
          application_id: row.applicationId,
          actor: this.actorOf(row),
          occurred_at: row.occurredAt.toISOString(),
          payload: row.data,
        })),
      };
      await firstValueFrom(this.clients.own.send<AuditAppendReply>(AUDIT_APPEND, append).pipe(timeout(AUDIT_TIMEOUT_MS)));
      await this.afterAppend(rows);
      for (const row of rows) this.parked.delete(row.id);
      return rows.length;
    });
  }

  /**
   * After a refused batch: up to a batch of events, each in a transaction of its own; one refused
   * alone is set aside and the next goes on. A failure of any other kind ends the drain (thrown).
   */
  private async relayOneAtATime(): Promise<number> {
    let handled = 0;
    while (handled < BATCH && !this.closed) {
      const claimed: string[] = [];
      try {
        if ((await this.relay(1, claimed)) === 0) break;
      } catch (error) {
        if (!refusedByConsumer(error) || claimed.length === 0) throw error;
        const [id] = claimed;
        const refusals = (this.parked.get(id)?.refusals ?? 0) + 1;
        const wait = Math.min(PARK_MS * 2 ** (refusals - 1), PARK_MAX_MS);
        this.parked.set(id, { until: this.now() + wait, refusals });
        this.logger.error(`outbox relay: event ${id} set aside for ${wait / 1000} s after ${refusals} refusal(s): ${(error as Error).message}`);
      }
      handled += 1;
    }
    return handled;
  }

  /** The ids of events set aside whose time has not come; those whose time came are tried again. */
  private setAside(): string[] {
    if (this.parked.size === 0) return [];
    const now = this.now();
    const ids: string[] = [];
    for (const [id, { until }] of this.parked) if (until > now) ids.push(id);
    return ids;
  }

  /** The events set aside now: id → when they are tried again (ms). Read by tests; each parking is also logged as an error. */
  parkedEvents(): Map<string, number> {
    return new Map([...this.parked].map(([id, { until }]) => [id, until]));
  }

  /** The clock the parking counts with (a test's to move). */
  protected now(): number {
    return Date.now();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    if (this.scheduled) clearTimeout(this.scheduled);
    if (this.sweeper) clearInterval(this.sweeper);
    await this.running;
  }
}

/**
 * Whether a relay failed because a consumer refused what it was sent (an error of its own, carried as
 * a DomainError), as opposed to a timeout, an absent service or the database, which every event
 * would meet alike.
 */
function refusedByConsumer(error: unknown): boolean {
  return error instanceof DomainError && error.code !== 'service_unavailable' && error.code !== 'upstream_timeout';
}

/** Whether the bus refused a message as larger than it carries (NATS's max_payload): a smaller batch goes. */
function tooLargeForTheBus(error: unknown): boolean {
  return error instanceof DomainError && error.code === 'payload_too_large';
}
