import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { entityFromRow, PreparedStatement } from '@dcr/persistence';
import { EntityManager, EntityMetadata, Repository } from 'typeorm';
import { IN_FLIGHT_STATUSES } from '@dcr/domain';
import { OutboxEvent } from '@dcr/service-kit';
import { DecisionSession } from './decision-session.entity';
import { SignInCode } from './sign-in-code.entity';

const CONSUME_WHERE = `WHERE "token" = $1 AND "application_id" = $2 AND "consent_token_hash" = $3
    AND "consent_token_consumed_at" IS NULL AND "consent_token_expires_at" > now()`;

/** On the path of every exchange: plain SQL, prepared once per connection. */
const CONSUME_CONSENT_TOKEN = new PreparedStatement(
  'decisions_consume_consent_token',
  `UPDATE "decisions"."decision_sessions" SET "consent_token_consumed_at" = now() ${CONSUME_WHERE} RETURNING *`,
);

/** On the path of every verification. */
const CONSUME_CONSENT_TOKEN_STATUS = new PreparedStatement<{ status: string; outcome: string | null }>(
  'decisions_consume_consent_token_status',
  `UPDATE "decisions"."decision_sessions" SET "consent_token_consumed_at" = now() ${CONSUME_WHERE} RETURNING "status", "outcome"`,
);

/** `WITH inserted AS (INSERT session) INSERT outbox event SELECT … FROM inserted`, one parameter per column. */
function insertWithEventStatement(sessionMeta: EntityMetadata, outboxMeta: EntityMetadata): PreparedStatement {
  let parameter = 0;
  const columns = (metadata: EntityMetadata) => metadata.columns.map((column) => `"${column.databaseName}"`).join(', ');
  const placeholders = (metadata: EntityMetadata) => metadata.columns.map(() => `$${++parameter}`).join(', ');
  const sessionValues = placeholders(sessionMeta);
  const outboxValues = placeholders(outboxMeta);
  return new PreparedStatement(
    'decisions_insert_session_with_event',
    `WITH inserted AS (INSERT INTO "decisions"."decision_sessions" (${columns(sessionMeta)}) VALUES (${sessionValues}) RETURNING 1)
     INSERT INTO "decisions"."outbox" (${columns(outboxMeta)}) SELECT ${outboxValues} FROM inserted`,
  );
}

/** Sessions and sign-in codes in this country's database; no rules here, only queries. */
@Injectable()
export class SessionsRepository {
  private insertStatement?: PreparedStatement;

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
   * so both commit or neither does, in one round trip and without an explicit transaction. The
   * statement's text depends only on the two entities' columns, so it is built once and prepared.
   */
  async insertWithEvent(session: DecisionSession, event: OutboxEvent): Promise<void> {
    const outboxMeta = this.sessions.manager.connection.getMetadata(OutboxEvent);
    const statement = (this.insertStatement ??= insertWithEventStatement(this.sessions.metadata, outboxMeta));
    const values: unknown[] = [];
    for (const [metadata, entity] of [[this.sessions.metadata, session], [outboxMeta, event]] as const) {
      for (const column of metadata.columns) {
        const value = (entity as unknown as Record<string, unknown>)[column.propertyName];
        values.push(column.type === 'jsonb' && value !== null && value !== undefined ? JSON.stringify(value) : value ?? null);
      }
    }
    await statement.run(this.sessions.manager.connection, values);
  }

  save(manager: EntityManager, session: DecisionSession): Promise<DecisionSession> {
    return manager.save(DecisionSession, session);
  }

  /**
   * Marks the consent token used if it is this session's, unused and unexpired, and returns the
   * session; null otherwise. The hash is compared by the index lookup, not in application code.
   */
  async consumeConsentToken(token: string, applicationId: string, tokenHash: string): Promise<DecisionSession | null> {
    const [row] = await CONSUME_CONSENT_TOKEN.rows(this.sessions.manager.connection, [token, applicationId, tokenHash]);
    return row ? this.fromRaw(row) : null;
  }

  /**
   * The same consumption for a verification, which needs the status and outcome only: every other
   * column of the row left in the database (parsing a whole session row, with its time stamps, was
   * the largest single cost of a verification).
   */
  async consumeConsentTokenStatus(token: string, applicationId: string, tokenHash: string): Promise<{ status: string; outcome: string | null } | null> {
    const [row] = await CONSUME_CONSENT_TOKEN_STATUS.rows(this.sessions.manager.connection, [token, applicationId, tokenHash]);
    return row ?? null;
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
