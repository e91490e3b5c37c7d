import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { entityFromRow } from '@dcr/persistence';
import { EntityManager, EntityMetadata, Repository } from 'typeorm';
import { IN_FLIGHT_STATUSES } from '@dcr/domain';
import { OutboxEvent } from '@dcr/service-kit';
import { DecisionSession } from './decision-session.entity';
import { SignInCode } from './sign-in-code.entity';

/** Sessions and sign-in codes in this country's database; no rules here, only queries. */
@Injectable()
export class SessionsRepository {
  constructor(
    @InjectRepository(DecisionSession) private readonly sessions: Repository<DecisionSession>,
    @InjectRepository(SignInCode) private readonly codes: Repository<SignInCode>,
  ) {}

  find(token: string, manager: EntityManager = this.sessions.manager): Promise<DecisionSession | null> {
    return manager.findOne(DecisionSession, { where: { token } });
  }

  /** The session row locked for the rest of the transaction: one move at a time per session. */
  lock(manager: EntityManager, token: string): Promise<DecisionSession | null> {
    return manager
      .createQueryBuilder(DecisionSession, 's')
      .where('s.token = :token', { token })
      .setLock('pessimistic_write')
      .getOne();
  }

  /** In-flight sessions past their time, locked and skipped by other replicas doing the same. */
  lockOverdue(manager: EntityManager, now: Date, limit: number): Promise<DecisionSession[]> {
    return manager
      .createQueryBuilder(DecisionSession, 's')
      .where('s.status IN (:...statuses)', { statuses: [...IN_FLIGHT_STATUSES] })
      .andWhere('s.expires_at <= :now', { now })
      .orderBy('s.expires_at', 'ASC')
      .limit(limit)
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getMany();
  }

  /**
   * Inserts a new session together with its outbox event in one statement (a data-modifying CTE),
   * so both commit or neither does, in one round trip and without an explicit transaction.
   */
  async insertWithEvent(session: DecisionSession, event: OutboxEvent): Promise<void> {
    const values: unknown[] = [];
    const placeholders = (metadata: EntityMetadata, entity: object) =>
      metadata.columns.map((column) => {
        const value = (entity as Record<string, unknown>)[column.propertyName];
        values.push(column.type === 'jsonb' && value !== null && value !== undefined ? JSON.stringify(value) : value ?? null);
        return `$${values.length}`;
      });
    const sessionMeta = this.sessions.metadata;
    const outboxMeta = this.sessions.manager.connection.getMetadata(OutboxEvent);
    const columns = (metadata: EntityMetadata) => metadata.columns.map((column) => `"${column.databaseName}"`).join(', ');
    const sessionValues = placeholders(sessionMeta, session).join(', ');
    const outboxValues = placeholders(outboxMeta, event).join(', ');
    await this.sessions.query(
      `WITH inserted AS (INSERT INTO "decisions"."decision_sessions" (${columns(sessionMeta)}) VALUES (${sessionValues}) RETURNING 1)
       INSERT INTO "decisions"."outbox" (${columns(outboxMeta)}) SELECT ${outboxValues} FROM inserted`,
      values,
    );
  }

  save(manager: EntityManager, session: DecisionSession): Promise<DecisionSession> {
    return manager.save(DecisionSession, session);
  }

  /**
   * Marks the consent token used if it is this session's, unused and unexpired, and returns the
   * session; null otherwise. The hash is compared by the index lookup, not in application code.
   */
  async consumeConsentToken(token: string, applicationId: string, tokenHash: string): Promise<DecisionSession | null> {
    // On the path of every verification: plain SQL, no query building.
    const rows: Record<string, unknown>[] = await this.sessions.query(
      `UPDATE "decisions"."decision_sessions" SET "consent_token_consumed_at" = now()
        WHERE "token" = $1 AND "application_id" = $2 AND "consent_token_hash" = $3
          AND "consent_token_consumed_at" IS NULL AND "consent_token_expires_at" > now()
        RETURNING *`,
      [token, applicationId, tokenHash],
    );
    // An UPDATE through query() answers [rows, count].
    const row = (Array.isArray(rows[0]) ? (rows[0] as Record<string, unknown>[])[0] : rows[0]) as Record<string, unknown> | undefined;
    return row ? this.fromRaw(row) : null;
  }

  private fromRaw(row: Record<string, unknown>): DecisionSession {
    return entityFromRow(this.sessions.metadata, row, new DecisionSession());
  }

  latestCode(manager: EntityManager, sessionToken: string): Promise<SignInCode | null> {
    return manager.findOne(SignInCode, { where: { sessionToken }, order: { createdAt: 'DESC' } });
  }

  countCodesSince(sessionToken: string, since: Date): Promise<number> {
    return this.codes
      .createQueryBuilder('c')
      .where('c.session_token = :sessionToken', { sessionToken })
      .andWhere('c.created_at > :since', { since })
      .getCount();
  }

  insertCode(code: SignInCode): Promise<unknown> {
    return this.codes.insert(code);
  }

  saveCode(manager: EntityManager, code: SignInCode): Promise<SignInCode> {
    return manager.save(SignInCode, code);
  }
}
