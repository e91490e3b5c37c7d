import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { CallBatcher, entityFromRow, PreparedStatement } from '@dcr/persistence';
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

/**
 * The verifications that arrived while the previous ones were at the database, as one UPDATE: the
 * calls travel as three arrays and an ordinal, and each updated row names the call that won it. Two
 * checks of one token in one batch join the same row, which PostgreSQL updates once, for one of
 * them: the other finds no row, as a replay does. Planned per call (an array parameter).
 */
const CONSUME_CONSENT_TOKENS_STATUS = new PreparedStatement<{ call: number; status: string; outcome: string | null }>(
  'decisions_consume_consent_tokens_status',
  `UPDATE "decisions"."decision_sessions" AS s SET "consent_token_consumed_at" = now()
     FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS c("token", "application_id", "hash", "call")
     WHERE s."token" = c."token" AND s."application_id" = c."application_id" AND s."consent_token_hash" = c."hash"
       AND s."consent_token_consumed_at" IS NULL AND s."consent_token_expires_at" > now()
     RETURNING c."call", s."status", s."outcome"`,
  { reusePlan: false },
);

/** At most this many verifications in one statement. */
const VERIFICATIONS_PER_BATCH = 200;

interface Verification {
  token: string;
  applicationId: string;
  tokenHash: string;
}

type VerifiedStatus = { status: string; outcome: string | null } | null;

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
  /**
   * Verifications go to the database in batches (CallBatcher): as many at a time as leave one pooled
   * connection to everything else, each carrying the checks that arrived during the last round trip.
   */
  private readonly verifications: CallBatcher<Verification, VerifiedStatus>;

  constructor(
    @InjectRepository(DecisionSession) private readonly sessions: Repository<DecisionSession>,
    @InjectRepository(SignInCode) private readonly codes: Repository<SignInCode>,
  ) {
    const poolSize = (sessions.manager.connection.options as { poolSize?: number }).poolSize ?? 10;
    this.verifications = new CallBatcher((calls) => this.consumeStatuses(calls), {
      maxBatch: VERIFICATIONS_PER_BATCH,
      maxConcurrent: Math.max(1, poolSize - 1),
    });
  }

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
  consumeConsentTokenStatus(token: string, applicationId: string, tokenHash: string): Promise<VerifiedStatus> {
    return this.verifications.call({ token, applicationId, tokenHash });
  }

  /** One batch of verifications: the single statement (its plan kept) for one, the array form for more. */
  private async consumeStatuses(calls: Verification[]): Promise<VerifiedStatus[]> {
    const connection = this.sessions.manager.connection;
    if (calls.length === 1) {
      const [{ token, applicationId, tokenHash }] = calls;
      const [row] = await CONSUME_CONSENT_TOKEN_STATUS.rows(connection, [token, applicationId, tokenHash]);
      return [row ?? null];
    }
    const rows = await CONSUME_CONSENT_TOKENS_STATUS.rows(connection, [
      calls.map((call) => call.token),
      calls.map((call) => call.applicationId),
      calls.map((call) => call.tokenHash),
      calls.map((_, index) => index),
    ]);
    const answers: VerifiedStatus[] = calls.map(() => null);
    for (const row of rows) answers[row.call] = { status: row.status, outcome: row.outcome };
    return answers;
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
