import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { DataSource } from 'typeorm';

/**
 * What the decisions service keeps only for a while, deleted once it has served (docs/architecture.md,
 * Retention): sign-in codes a day after they were asked for (a code is valid 10 minutes, and the
 * hourly limits count the last hour's), inbox sign-ins a day after they expired (12 hours after the
 * code), the development mailbox's mail after 7 days (it exists outside production only), and the
 * person's address and external id on a session that ended without a decision 30 days after it ended.
 * Nothing here is evidence: records, their events and the audit trail are kept.
 */
export const RETENTION_SWEEPS: ReadonlyArray<{ what: string; sql: string }> = [
  { what: 'sign-in codes', sql: `DELETE FROM "decisions"."sign_in_codes" WHERE "created_at" < now() - interval '1 day'` },
  { what: 'inbox sign-ins', sql: `DELETE FROM "decisions"."inbox_sessions" WHERE "expires_at" < now() - interval '1 day'` },
  { what: 'development mail', sql: `DELETE FROM "decisions"."dev_mailbox" WHERE "sent_at" < now() - interval '7 days'` },
  // A session that ended without a decision (expired or cancelled, no outcome) is no one's evidence
  // of a choice: its person's address and external id go 30 days after it ended (the opaque subject
  // id stays, as the audit trail's events name it). IX_decision_sessions_ended_person finds them.
  {
    what: 'people of sessions ended without a decision',
    sql: `UPDATE "decisions"."decision_sessions" SET "subject_email" = NULL, "subject_external_id" = NULL
          WHERE "status" = 'expired' AND "outcome" IS NULL AND ("subject_email" IS NOT NULL OR "subject_external_id" IS NOT NULL)
            AND "updated_at" < now() - interval '30 days'`,
  },
];

@Injectable()
export class RetentionSweep {
  private readonly logger = new Logger(RetentionSweep.name);

  constructor(private readonly dataSource: DataSource) {}

  /** Every hour; each kind on its own, so one failing does not keep the others. Answers how many rows went, per kind. */
  @Interval(3_600_000)
  async sweep(): Promise<Record<string, number>> {
    const removed: Record<string, number> = {};
    for (const { what, sql } of RETENTION_SWEEPS) {
      try {
        const [, count] = (await this.dataSource.query(sql)) as [unknown, number];
        removed[what] = count;
      } catch (error) {
        this.logger.warn(`retention sweep of ${what} failed: ${(error as Error).message}`);
      }
    }
    return removed;
  }
}
