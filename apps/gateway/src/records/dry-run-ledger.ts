import { DryRunLedger, ImportRowInput } from '@dcr/contracts';
import { normaliseEmail } from '@dcr/domain';

/**
 * What the chunks of a dry run sent so far would have written (ImportChunkReply.ledger), for the
 * chunks after them: a real import's later chunk finds its earlier chunks' idempotency keys and
 * people in the database, a dry run's finds nothing there, so each chunk is sent what it meets of
 * them (`meets`: only the keys its rows repeat and the people its rows name by e-mail address or
 * external id, so a message stays the size of its chunk).
 */
export class DryRunLedgerOfRun {
  private readonly keys = new Map<string, string>();
  /** By e-mail address: the external id the person would have (null for none). */
  private readonly people = new Map<string, string | null>();
  private readonly emailOfExternalId = new Map<string, string>();

  /** Adds what a chunk would write (a key already held keeps its first body; a person's external id, once given, stays). */
  add(ledger: DryRunLedger | undefined): void {
    for (const { idempotency_key: key, fingerprint } of ledger?.keys ?? []) if (!this.keys.has(key)) this.keys.set(key, fingerprint);
    for (const { email, external_id: externalId } of ledger?.people ?? []) {
      const held = this.people.get(email);
      if (held === undefined || held === null) this.people.set(email, externalId ?? null);
      if (externalId && !this.emailOfExternalId.has(externalId)) this.emailOfExternalId.set(externalId, email);
    }
  }

  /** What the rows of a chunk meet of it, or undefined for nothing. */
  meets(rows: ImportRowInput[]): DryRunLedger | undefined {
    const keys = new Set<string>();
    const emails = new Set<string>();
    for (const row of rows) {
      if (typeof row.idempotency_key === 'string' && this.keys.has(row.idempotency_key)) keys.add(row.idempotency_key);
      const subject = row.subject;
      if (typeof subject?.email === 'string' && this.people.has(normaliseEmail(subject.email))) emails.add(normaliseEmail(subject.email));
      const byExternal = typeof subject?.external_id === 'string' ? this.emailOfExternalId.get(subject.external_id.trim()) : undefined;
      if (byExternal !== undefined) emails.add(byExternal);
    }
    if (keys.size === 0 && emails.size === 0) return undefined;
    return {
      keys: [...keys].map((key) => ({ idempotency_key: key, fingerprint: this.keys.get(key)! })),
      people: [...emails].map((email) => ({ email, external_id: this.people.get(email) ?? null })),
    };
  }
}
