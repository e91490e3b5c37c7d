import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { batchesAtOnce, CallBatcher, entityFromRow, entityRecordset, JsonRecordset, PreparedStatement, retriedOnDeadlock } from '@dcr/persistence';
import { DataSource, EntityManager, EntityMetadata, Repository } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { hashCredential, IN_FLIGHT_STATUSES } from '@dcr/domain';
import { OutboxEvent } from '@dcr/service-kit';
import { DecisionSession } from './decision-session.entity';
import { SignInCode } from './sign-in-code.entity';
import { StaleFlowVersion, versionStillActiveSql } from '../flows/flows.repository';

const CONSUME_WHERE = `WHERE "token_hash" = $1 AND "application_id" = $2 AND "consent_token_hash" = $3
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
     FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS c("token_hash", "application_id", "hash", "call")
     WHERE s."token_hash" = c."token_hash" AND s."application_id" = c."application_id" AND s."consent_token_hash" = c."hash"
       AND s."consent_token_consumed_at" IS NULL AND s."consent_token_expires_at" > now()
     RETURNING c."call", s."status", s."outcome"`,
  { reusePlan: false },
);

/** An entity's value of a column as a statement parameter: JSON text for a jsonb column, null for undefined. */
function parameterOf(column: ColumnMetadata, entity: object): unknown {
  const value = (entity as Record<string, unknown>)[column.propertyName];
  return column.type === 'jsonb' && value !== null && value !== undefined ? JSON.stringify(value) : value ?? null;
}

/** A session row, found by its token's hash, locked for the rest of the transaction: one move at a time per session. */
const LOCK_SESSION = new PreparedStatement('decisions_lock_session', `SELECT * FROM "decisions"."decision_sessions" WHERE "token_hash" = $1 FOR UPDATE`);

/** `UPDATE … SET <every column but the id> WHERE "id" = $1`, one parameter per column. */
function updateSessionStatement(sessionMeta: EntityMetadata): PreparedStatement {
  let parameter = 1;
  const assignments = sessionMeta.columns.filter((column) => !column.isPrimary).map((column) => `"${column.databaseName}" = $${++parameter}`);
  return new PreparedStatement('decisions_update_session', `UPDATE "decisions"."decision_sessions" SET ${assignments.join(', ')} WHERE "id" = $1`);
}

/** At most this many verifications in one statement. */
const VERIFICATIONS_PER_BATCH = 200;

interface Verification {
  sessionTokenHash: string;
  applicationId: string;
  tokenHash: string;
}

type VerifiedStatus = { status: string; outcome: string | null } | null;

/**
 * The condition a new session's row is inserted under: it names no flow, or the flow version it was
 * built from is still the flow's active one. The version comes from FlowsRepository.current, which
 * may answer from memory; a version superseded since (activated here, by another replica, or
 * replicated from the flow's home country) fails it, and the session is built again from the
 * database's answer (CreateDecision). The statement's snapshot is taken after the request arrived,
 * so a session asked for after an activation committed never uses the version it superseded.
 */
function flowStillActiveSql(flowId: string, flowVersion: string): string {
  return `(${flowId} IS NULL OR ${versionStillActiveSql(flowId, flowVersion)})`;
}

/**
 * `WITH inserted AS (INSERT session … WHERE its flow version is active) INSERT outbox event SELECT … FROM
 * inserted`, one parameter per column (each cast to its column's type: the values are selected, not
 * VALUES of the insert). Inserts both rows or, when the flow version is no longer active, neither
 * (row count 0).
 */
function insertWithEventStatement(dataSource: DataSource, sessionMeta: EntityMetadata, outboxMeta: EntityMetadata): PreparedStatement {
  let parameter = 0;
  const columns = (metadata: EntityMetadata) => metadata.columns.map((column) => `"${column.databaseName}"`).join(', ');
  const placeholders = (metadata: EntityMetadata) => metadata.columns.map((column) => `$${++parameter}::${dataSource.driver.normalizeType(column)}`);
  const sessionValues = placeholders(sessionMeta);
  const outboxValues = placeholders(outboxMeta);
  const valueOf = (propertyName: string) => sessionValues[sessionMeta.columns.findIndex((column) => column.propertyName === propertyName)];
  return new PreparedStatement(
    'decisions_insert_session_with_event',
    `WITH inserted AS (
       INSERT INTO "decisions"."decision_sessions" (${columns(sessionMeta)})
       SELECT ${sessionValues.join(', ')} WHERE ${flowStillActiveSql(valueOf('flowId'), valueOf('flowVersion'))}
       RETURNING 1)
     INSERT INTO "decisions"."outbox" (${columns(outboxMeta)}) SELECT ${outboxValues.join(', ')} FROM inserted`,
  );
}

/**
 * The same two inserts for several sessions at once: the rows travel as two JSON documents
 * (`jsonb_to_recordset`, typed by the entities' column types), so the text is the same for any
 * number of rows. One statement: every row of the batch commits, or none does. A session whose flow
 * version is no longer active is left out with its event (each event names its session in
 * `data.session_id`, as `transitionEvent` writes it), and the statement answers the ids of the
 * sessions it inserted.
 */
function insertManyWithEventsStatement(sessionMeta: EntityMetadata, outboxMeta: EntityMetadata, sessionRows: JsonRecordset<DecisionSession>, outboxRows: JsonRecordset<OutboxEvent>): PreparedStatement<{ session_id: string }> {
  const columns = (metadata: EntityMetadata) => metadata.columns.map((column) => `"${column.databaseName}"`).join(', ');
  return new PreparedStatement(
    'decisions_insert_sessions_with_events',
    `WITH inserted AS (
       INSERT INTO "decisions"."decision_sessions" (${columns(sessionMeta)})
       SELECT ${columns(sessionMeta)} FROM jsonb_to_recordset($1::jsonb) AS r(${sessionRows.columns})
        WHERE ${flowStillActiveSql('r."flow_id"', 'r."flow_version"')}
       RETURNING "id")
     INSERT INTO "decisions"."outbox" (${columns(outboxMeta)})
     SELECT ${columns(outboxMeta)} FROM jsonb_to_recordset($2::jsonb) AS r(${outboxRows.columns})
      WHERE r."data"->>'session_id' IN (SELECT "id" FROM inserted)
     RETURNING "data"->>'session_id' AS "session_id"`,
  );
}

/** At most this many new sessions in one statement. */
const SESSIONS_PER_BATCH = 100;

interface NewSession {
  session: DecisionSession;
  event: OutboxEvent;
}

/** Sessions and sign-in codes in this country's database; no rules here, only queries. */
@Injectable()
export class SessionsRepository {
  private insertStatement?: PreparedStatement;
  private batchInsert?: { sessionRows: JsonRecordset<DecisionSession>; outboxRows: JsonRecordset<OutboxEvent>; statement: PreparedStatement<{ session_id: string }> };
  private updateStatement?: PreparedStatement;
  /** New sessions go to the database in batches too, as verifications do (an insert failed in a batch is retried alone). */
  private readonly creations: CallBatcher<NewSession, Error | null>;
  /**
   * Verifications go to the database in batches (CallBatcher): as many at a time as leave one pooled
   * connection to everything else, each carrying the checks that arrived during the last round trip.
   */
  private readonly verifications: CallBatcher<Verification, VerifiedStatus>;

  constructor(
    @InjectRepository(DecisionSession) private readonly sessions: Repository<DecisionSession>,
    @InjectRepository(SignInCode) private readonly codes: Repository<SignInCode>,
  ) {
    const maxConcurrent = batchesAtOnce(sessions.manager.connection);
    this.verifications = new CallBatcher((calls) => this.consumeStatuses(calls), { maxBatch: VERIFICATIONS_PER_BATCH, maxConcurrent });
    this.creations = new CallBatcher((calls) => this.insertSessions(calls), { maxBatch: SESSIONS_PER_BATCH, maxConcurrent });
  }

  /** The session of a token presented, found by the token's hash (the row keeps no token). */
  find(token: string, manager: EntityManager = this.sessions.manager): Promise<DecisionSession | null> {
    return manager.findOne(DecisionSession, { where: { tokenHash: hashCredential(token) } });
  }

  /** The session of a token presented, locked for the rest of the transaction: one move at a time per session. */
  async lock(manager: EntityManager, token: string): Promise<DecisionSession | null> {
    const [row] = await LOCK_SESSION.rows(manager, [hashCredential(token)]);
    return row ? this.fromRaw(row) : null;
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
   * The event is the session's own (its `data.session_id` names it). Throws StaleFlowVersion, having
   * written nothing, when the session names a flow version that is no longer active.
   */
  async insertWithEvent(session: DecisionSession, event: OutboxEvent): Promise<void> {
    // The batch statement keeps an event only with the session its data names: one naming none would be lost.
    if (event.data?.session_id !== session.id) throw new Error(`The event of new session ${session.id} must name it in data.session_id`);
    const failure = await this.creations.call({ session, event });
    if (failure) throw failure;
  }

  /**
   * One batch of new sessions: the single statement for one, the JSON form for more. A batch that
   * fails is tried again row by row, so that a row the database refuses fails its own call only;
   * each call gets its own error or null.
   */
  private async insertSessions(calls: NewSession[]): Promise<Array<Error | null>> {
    if (calls.length > 1) {
      try {
        const inserted = new Set(await this.insertMany(calls));
        return calls.map(({ session }) => (inserted.has(session.id) ? null : new StaleFlowVersion(session.flowId ?? '')));
      } catch {
        // Each on its own below: the error that counts is the one of the call's own row.
      }
    }
    return Promise.all(calls.map((call) => this.insertOne(call).then(() => null, (error: Error) => error)));
  }

  private async insertOne({ session, event }: NewSession): Promise<void> {
    const dataSource = this.sessions.manager.connection;
    const outboxMeta = dataSource.getMetadata(OutboxEvent);
    const statement = (this.insertStatement ??= insertWithEventStatement(dataSource, this.sessions.metadata, outboxMeta));
    const values: unknown[] = [];
    for (const [metadata, entity] of [[this.sessions.metadata, session], [outboxMeta, event]] as const) {
      for (const column of metadata.columns) {
        values.push(parameterOf(column, entity));
      }
    }
    const { rowCount } = await statement.run(dataSource, values);
    if (rowCount === 0) throw new StaleFlowVersion(session.flowId ?? '');
  }

  /** The ids of the sessions inserted (every one whose flow version is still active). */
  private async insertMany(calls: NewSession[]): Promise<string[]> {
    const dataSource = this.sessions.manager.connection;
    if (!this.batchInsert) {
      const outboxMeta = dataSource.getMetadata(OutboxEvent);
      const sessionRows = entityRecordset<DecisionSession>(dataSource, this.sessions.metadata);
      const outboxRows = entityRecordset<OutboxEvent>(dataSource, outboxMeta);
      this.batchInsert = { sessionRows, outboxRows, statement: insertManyWithEventsStatement(this.sessions.metadata, outboxMeta, sessionRows, outboxRows) };
    }
    const { sessionRows, outboxRows, statement } = this.batchInsert;
    const rows = await statement.rows(dataSource, [sessionRows.document(calls.map((call) => call.session)), outboxRows.document(calls.map((call) => call.event))]);
    return rows.map((row) => row.session_id);
  }

  /**
   * Writes a session the caller locked in this transaction (`lock`, `lockOverdue`): every column
   * but the id, by one prepared UPDATE. The row is locked, so writing the unchanged columns
   * back is the same as writing the changed ones only, without TypeORM's reload and diff.
   */
  async save(manager: EntityManager, session: DecisionSession): Promise<DecisionSession> {
    const statement = (this.updateStatement ??= updateSessionStatement(this.sessions.metadata));
    const values: unknown[] = [session.id];
    for (const column of this.sessions.metadata.columns) {
      if (column.isPrimary) continue;
      values.push(parameterOf(column, session));
    }
    const { rowCount } = await statement.run(manager, values);
    if (rowCount !== 1) throw new Error(`Session ${session.id} was not found to save`);
    return session;
  }

  /**
   * Marks the consent token used if it is this session's, unused and unexpired, and returns the
   * session; null otherwise. The hashes are compared by the index lookup, not in application code.
   */
  async consumeConsentToken(token: string, applicationId: string, tokenHash: string): Promise<DecisionSession | null> {
    const [row] = await CONSUME_CONSENT_TOKEN.rows(this.sessions.manager.connection, [hashCredential(token), applicationId, tokenHash]);
    return row ? this.fromRaw(row) : null;
  }

  /**
   * The same consumption for a verification, which needs the status and outcome only: every other
   * column of the row left in the database (parsing a whole session row, with its time stamps, was
   * the largest single cost of a verification).
   */
  consumeConsentTokenStatus(token: string, applicationId: string, tokenHash: string): Promise<VerifiedStatus> {
    return this.verifications.call({ sessionTokenHash: hashCredential(token), applicationId, tokenHash });
  }

  /** One batch of verifications: the single statement (its plan kept) for one, the array form for more. */
  private async consumeStatuses(calls: Verification[]): Promise<VerifiedStatus[]> {
    const connection = this.sessions.manager.connection;
    if (calls.length === 1) {
      const [{ sessionTokenHash, applicationId, tokenHash }] = calls;
      const [row] = await CONSUME_CONSENT_TOKEN_STATUS.rows(connection, [sessionTokenHash, applicationId, tokenHash]);
      return [row ?? null];
    }
    // In the order of the sessions' token hashes, the index the statement finds them by, so that two
    // batches checking some of the same sessions (two replicas, a client checking again in parallel)
    // lock them in one order and wait for each other; a deadlock left to other plans (a hash join
    // takes the table's order) undoes the whole statement, which is then run again (nothing of it
    // was consumed).
    const order = calls.map((_, index) => index).sort((a, b) => (calls[a].sessionTokenHash < calls[b].sessionTokenHash ? -1 : calls[a].sessionTokenHash > calls[b].sessionTokenHash ? 1 : a - b));
    const rows = await retriedOnDeadlock(() =>
      CONSUME_CONSENT_TOKENS_STATUS.rows(connection, [
        order.map((index) => calls[index].sessionTokenHash),
        order.map((index) => calls[index].applicationId),
        order.map((index) => calls[index].tokenHash),
        order,
      ]),
    );
    const answers: VerifiedStatus[] = calls.map(() => null);
    for (const row of rows) answers[row.call] = { status: row.status, outcome: row.outcome };
    return answers;
  }

  private fromRaw(row: Record<string, unknown>): DecisionSession {
    return entityFromRow(this.sessions.metadata, row, new DecisionSession());
  }

  /** The latest sign-in code of a session, by its public id. */
  latestCode(manager: EntityManager, sessionId: string): Promise<SignInCode | null> {
    return manager.findOne(SignInCode, { where: { sessionId }, order: { createdAt: 'DESC' } });
  }

  countCodesSince(sessionId: string, since: Date): Promise<number> {
    return this.codes
      .createQueryBuilder('c')
      .where('c.session_id = :sessionId', { sessionId })
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
