import { DomainError, FieldIssue } from '@dcr/domain';

/** UTC ISO 8601 with seconds (`2025-03-01T10:00:00Z`, `2025-03-01T10:00:00.123Z`). */
export const UTC_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

/** Collects the problems of a builder input and refuses them all at once (`validation_failed`). */
export class ReceiptInputIssues {
  readonly list: FieldIssue[] = [];

  add(field: string, reason: string): void {
    this.list.push({ field, reason });
  }

  time(field: string, value: unknown): void {
    if (typeof value !== 'string' || !UTC_TIME.test(value) || Number.isNaN(Date.parse(value))) {
      this.add(field, 'must be an ISO 8601 UTC time such as 2025-03-01T10:00:00Z');
    }
  }

  throwIfAny(message: string): void {
    if (this.list.length > 0) throw new DomainError('validation_failed', message, this.list);
  }
}
