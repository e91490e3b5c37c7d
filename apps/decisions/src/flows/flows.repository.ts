import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { FlowActivation } from '@dcr/domain';
import { batchesAtOnce, CallBatcher, entityFromRow, PreparedStatement } from '@dcr/persistence';
import { EntityManager, Repository } from 'typeorm';
import { FlowVersion } from './flow-version.entity';

/** What opening a session needs of the flow version it will use. */
export interface SessionFlow {
  applicationId: string;
  version: number;
  status: string;
  /** The terms' pattern and locale: the rest of the terms stays in the database. */
  pattern: string | null;
  locale: string | null;
}

/**
 * On the path of every new session: plain SQL, prepared once per connection, reading back only what
 * a new session needs (the whole row, with its terms document and time stamps, cost more to parse
 * than the rest of the lookup).
 */
const CURRENT_VERSION = new PreparedStatement<{ application_id: string; version: number; status: string; pattern: string | null; locale: string | null }>(
  'decisions_flow_current_version',
  `SELECT "application_id", "version", "status", "terms"->>'pattern' AS "pattern", "terms"->>'locale' AS "locale"
     FROM "decisions"."flow_versions" WHERE "id" = $1
    ORDER BY CASE WHEN "status" = 'active' THEN 0 ELSE 1 END, "version" DESC LIMIT 1`,
);

/**
 * The same lookup for the flows of the sessions opened meanwhile (FlowsRepository.current batches
 * them): one row per flow. Planned per call (an array parameter).
 */
const CURRENT_VERSIONS = new PreparedStatement<{ id: string; application_id: string; version: number; status: string; pattern: string | null; locale: string | null }>(
  'decisions_flow_current_versions',
  `SELECT DISTINCT ON ("id") "id", "application_id", "version", "status", "terms"->>'pattern' AS "pattern", "terms"->>'locale' AS "locale"
     FROM "decisions"."flow_versions" WHERE "id" = ANY($1::text[])
    ORDER BY "id", CASE WHEN "status" = 'active' THEN 0 ELSE 1 END, "version" DESC`,
  { reusePlan: false },
);

/** At most this many lookups in one statement. */
const LOOKUPS_PER_BATCH = 100;
/** Active flow versions kept in memory for new sessions; past this many, the oldest kept is forgotten. */
const REMEMBERED_FLOWS = 10_000;

/** One version, for completions and recorded consents against a pinned version. */
const VERSION = new PreparedStatement('decisions_flow_version', `SELECT * FROM "decisions"."flow_versions" WHERE "id" = $1 AND "version" = $2`);

/**
 * The version a consent is recorded against, as a subquery for a statement that reads it together
 * with other rows (the Record API's batch lookup, ImportBatch.flowAndKnownPeople): the pinned
 * version (parameter `version`) when given, as VERSION answers it, else the newest active one, as
 * ACTIVE_VERSION does. `id` and `version` are parameter references such as `$3`.
 */
export function recordedVersionSql(id: string, version: string): string {
  return `SELECT * FROM "decisions"."flow_versions"
          WHERE "id" = ${id} AND (CASE WHEN ${version}::int IS NULL THEN "status" = 'active' ELSE "version" = ${version}::int END)
          ORDER BY "version" DESC LIMIT 1`;
}

/**
 * The condition of an insert built from a flow version that may have been remembered (sessions,
 * Record API batches): that version is still the flow's active one. `id` and `version` are SQL
 * expressions (parameter references or columns).
 */
export function versionStillActiveSql(id: string, version: string): string {
  return `EXISTS (SELECT 1 FROM "decisions"."flow_versions" v WHERE v."id" = ${id} AND v."version" = ${version} AND v."status" = 'active')`;
}

/**
 * A write was built from a flow version that is no longer the flow's active one (a newer version
 * was activated since it was read or remembered): nothing was written, and the write is to be built
 * again from the flow's current version.
 */
export class StaleFlowVersion extends Error {
  constructor(readonly flowId: string) {
    super(`The version of flow ${flowId} the write was built from is no longer active`);
  }
}

/** The newest active version, for recorded consents (captures, imports, form connections; the Record API uses recordedVersionSql). */
const ACTIVE_VERSION = new PreparedStatement(
  'decisions_flow_active_version',
  `SELECT * FROM "decisions"."flow_versions" WHERE "id" = $1 AND "status" = 'active' ORDER BY "version" DESC LIMIT 1`,
);

/**
 * The versions of a flow that were activated (every version but a draft), oldest first, with when:
 * which one was in force at a capture time (versionInForce). A version activated before the
 * service kept activation times would have none: its creation stands in.
 */
const ACTIVATIONS = new PreparedStatement<{ application_id: string; version: number; activated_at: Date }>(
  'decisions_flow_activations',
  `SELECT "application_id", "version", COALESCE("activated_at", "created_at") AS "activated_at" FROM "decisions"."flow_versions"
    WHERE "id" = $1 AND "status" <> 'draft' ORDER BY "version"`,
);

/** The same versions whole (imports check each row against the version in force at its capture). */
const ACTIVATED_VERSIONS = new PreparedStatement('decisions_flow_activated_versions', `SELECT * FROM "decisions"."flow_versions" WHERE "id" = $1 AND "status" <> 'draft' ORDER BY "version"`);

/** A flow's activated versions and its application (FlowsRepository.activations). */
export interface FlowActivations {
  applicationId: string;
  activations: FlowActivation[];
}

/** Flow versions in this country's database; no rules here, only queries. */
@Injectable()
export class FlowsRepository {
  /**
   * Lookups of the version new sessions use go to the database in batches (CallBatcher): each batch
   * holds only lookups made before it was sent, so a session opened after a flow's new version was
   * published still sees that version.
   */
  private readonly currentLookups: CallBatcher<string, SessionFlow | null>;
  /**
   * The active version of each flow sessions were opened for lately. What a session needs of it
   * (application, version, pattern, locale) never changes for that version; only which version is
   * active does, and the insert of a session checks that in the same statement (SessionsRepository:
   * a stale version writes nothing and is looked up again), so a remembered version is never used
   * once superseded. It saves a round trip to the database per new session.
   */
  private readonly activeVersions = new Map<string, SessionFlow>();
  /**
   * The same for the Record API, whole (the capture rules read the terms): the active version of
   * each flow recorded against lately, remembered from its batch lookup (RecordWriter). The batch's
   * insert checks in the same statement that the version is still active, so this is never used
   * once superseded either.
   */
  private readonly recordedVersions = new Map<string, FlowVersion>();
  /**
   * The activated versions of each flow the Record API was asked about lately, for records captured
   * before the version remembered above was activated (RecordConsent). A version's activation time
   * never changes; only newer activations are missing from what is remembered, which the writer
   * notices when it meets the version active now (VersionNotInForce) and then reads afresh.
   */
  private readonly activationsOf = new Map<string, FlowActivations>();

  constructor(@InjectRepository(FlowVersion) private readonly versions: Repository<FlowVersion>) {
    this.currentLookups = new CallBatcher((flowIds) => this.currentOf(flowIds), {
      maxBatch: LOOKUPS_PER_BATCH,
      maxConcurrent: batchesAtOnce(versions.manager.connection),
    });
  }

  latest(flowId: string, manager: EntityManager = this.versions.manager): Promise<FlowVersion | null> {
    return manager.findOne(FlowVersion, { where: { id: flowId }, order: { version: 'DESC' } });
  }

  async version(flowId: string, version: number, manager: EntityManager = this.versions.manager): Promise<FlowVersion | null> {
    const [row] = await VERSION.rows(manager, [flowId, version]);
    return row ? entityFromRow(this.versions.metadata, row, new FlowVersion()) : null;
  }

  async active(flowId: string): Promise<FlowVersion | null> {
    const [row] = await ACTIVE_VERSION.rows(this.versions.manager, [flowId]);
    return row ? entityFromRow(this.versions.metadata, row, new FlowVersion()) : null;
  }

  /**
   * The version new sessions use: the newest active one, else (to tell a draft apart) the newest.
   * An active version is remembered (see `activeVersions`); `fresh` asks the database regardless,
   * after an insert found the remembered one superseded.
   */
  async current(flowId: string, options: { fresh?: boolean } = {}): Promise<SessionFlow | null> {
    if (!options.fresh) {
      const remembered = this.activeVersions.get(flowId);
      if (remembered) return remembered;
    }
    const flow = await this.currentLookups.call(flowId);
    this.activeVersions.delete(flowId);
    if (flow?.status === 'active') {
      if (this.activeVersions.size >= REMEMBERED_FLOWS) this.activeVersions.delete(this.activeVersions.keys().next().value as string);
      this.activeVersions.set(flowId, flow);
    }
    return flow;
  }

  /** Forgets the remembered active version of a flow (its versions changed here). */
  forget(flowId: string): void {
    this.activeVersions.delete(flowId);
    this.recordedVersions.delete(flowId);
    this.activationsOf.delete(flowId);
  }

  /**
   * The activated versions of a flow and when each was activated (null: no such flow), remembered
   * (see `activationsOf`); `fresh` reads them again.
   */
  async activations(flowId: string, options: { fresh?: boolean } = {}): Promise<FlowActivations | null> {
    const remembered = options.fresh ? undefined : this.activationsOf.get(flowId);
    if (remembered) return remembered;
    const rows = await ACTIVATIONS.rows(this.versions.manager, [flowId]);
    const found = rows.length === 0 ? null : { applicationId: rows[0].application_id, activations: rows.map((row) => ({ version: row.version, activatedAt: new Date(row.activated_at).getTime() })) };
    this.activationsOf.delete(flowId);
    if (this.activationsOf.size >= REMEMBERED_FLOWS) this.activationsOf.delete(this.activationsOf.keys().next().value as string);
    // A flow not found is not remembered: it may be replicated here in a moment.
    if (found) this.activationsOf.set(flowId, found);
    return found;
  }

  /** Every activated version of a flow, oldest first. */
  async activatedVersions(flowId: string): Promise<FlowVersion[]> {
    const rows = await ACTIVATED_VERSIONS.rows(this.versions.manager, [flowId]);
    return rows.map((row) => entityFromRow(this.versions.metadata, row, new FlowVersion()));
  }

  /** The active version of a flow the Record API remembered (`rememberForRecords`), if any. */
  rememberedForRecords(flowId: string): FlowVersion | undefined {
    return this.recordedVersions.get(flowId);
  }

  /** Remembers a flow's active version for the Record API, read from the database just now. */
  rememberForRecords(flow: FlowVersion): void {
    this.recordedVersions.delete(flow.id);
    if (flow.status !== 'active') return;
    if (this.recordedVersions.size >= REMEMBERED_FLOWS) this.recordedVersions.delete(this.recordedVersions.keys().next().value as string);
    this.recordedVersions.set(flow.id, flow);
  }

  /** One batch of lookups: the single statement (its plan kept) for one flow, the array form for more. */
  private async currentOf(flowIds: string[]): Promise<Array<SessionFlow | null>> {
    const connection = this.versions.manager.connection;
    const distinct = [...new Set(flowIds)];
    const rows = distinct.length === 1 ? (await CURRENT_VERSION.rows(connection, distinct)).map((row) => ({ ...row, id: distinct[0] })) : await CURRENT_VERSIONS.rows(connection, [distinct]);
    const byId = new Map(rows.map((row) => [row.id, { applicationId: row.application_id, version: row.version, status: row.status, pattern: row.pattern, locale: row.locale }]));
    return flowIds.map((flowId) => byId.get(flowId) ?? null);
  }

  /** Every version of one flow, locked for the rest of the transaction (activation, new version). */
  lockVersions(manager: EntityManager, flowId: string): Promise<FlowVersion[]> {
    return manager
      .createQueryBuilder(FlowVersion, 'f')
      .where('f.id = :flowId', { flowId })
      .orderBy('f.version', 'ASC')
      .setLock('pessimistic_write')
      .getMany();
  }

  /** The newest version of each flow of an application, newest flow first, after a cursor position. */
  async page(applicationId: string, limit: number, after?: { created_at: string; id: string }): Promise<FlowVersion[]> {
    const query = this.versions
      .createQueryBuilder('f')
      .distinctOn(['f.created_at', 'f.id'])
      .where('f.application_id = :applicationId', { applicationId })
      .andWhere('f.version = (SELECT max(v.version) FROM "decisions"."flow_versions" v WHERE v.id = f.id)')
      .orderBy('f.created_at', 'DESC')
      .addOrderBy('f.id', 'DESC')
      .limit(limit);
    if (after) {
      query.andWhere('(f.created_at, f.id) < (:createdAt, :id)', { createdAt: after.created_at, id: after.id });
    }
    return query.getMany();
  }

  /** Versions authored in this country, for a peer that asks for everything. */
  authoredIn(country: string): Promise<FlowVersion[]> {
    return this.versions.find({ where: { authoredIn: country }, order: { id: 'ASC', version: 'ASC' } });
  }

  /** Stores a replicated version unless the copy here is as new or newer. True when it changed. */
  async applyReplica(row: FlowVersion): Promise<boolean> {
    const rows: unknown[] = await this.versions.query(
      `INSERT INTO "decisions"."flow_versions" ("id", "version", "application_id", "status", "terms", "terms_fingerprint",
         "authored_in", "revision", "created_at", "updated_at", "activated_at", "superseded_at")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT ("id", "version") DO UPDATE SET
         "status" = EXCLUDED."status", "terms" = EXCLUDED."terms", "terms_fingerprint" = EXCLUDED."terms_fingerprint",
         "revision" = EXCLUDED."revision", "updated_at" = EXCLUDED."updated_at",
         "activated_at" = EXCLUDED."activated_at", "superseded_at" = EXCLUDED."superseded_at"
       WHERE "flow_versions"."revision" < EXCLUDED."revision"
       RETURNING "id"`,
      [
        row.id,
        row.version,
        row.applicationId,
        row.status,
        JSON.stringify(row.terms),
        row.termsFingerprint,
        row.authoredIn,
        row.revision,
        row.createdAt,
        row.updatedAt,
        row.activatedAt,
        row.supersededAt,
      ],
    );
    return rows.length > 0;
  }
}
