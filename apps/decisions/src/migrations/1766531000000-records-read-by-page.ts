import { createIndexConcurrently, dropIndexConcurrently } from '@dcr/persistence';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A person's records are read a page at a time (the records page and its API, newest given first):
 * one index gives each of the person's subjects its records in that order, so a page reads its
 * records and not the whole history; the other gives each chain (a person's records of one flow)
 * in the order its decisions were made (madeOrder), so each listed record's successor, and whether
 * a newer record holds a purpose, are found from the record onwards, not by scanning the chain.
 * That one replaces IX_consent_records_subject (subject, flow, recorded_at): it serves every lookup
 * of a chain that index served (the same leading columns), and the newest record of a chain in the
 * order the writer reads it (LATEST_OF_PERSON: captured_at, recorded_at, record_id), so a record's
 * insert maintains one index more than before, not two.
 *
 * Built and dropped concurrently, outside a transaction (`transaction = false`): a country upgrading
 * with millions of records keeps recording consents while the indexes are built.
 */
export class RecordsReadByPage1766531000000 implements MigrationInterface {
  name = 'RecordsReadByPage1766531000000';
  transaction = false;

  async up(runner: QueryRunner): Promise<void> {
    await createIndexConcurrently(runner, 'decisions', 'IX_consent_records_person_page', `"consent_records" ("subject_id", "captured_at", "recorded_at", "record_id")`);
    await createIndexConcurrently(runner, 'decisions', 'IX_consent_records_chain_order', `"consent_records" ("subject_id", "flow_id", "captured_at", "recorded_at", "record_id")`);
    await dropIndexConcurrently(runner, 'decisions', 'IX_consent_records_subject');
  }

  async down(runner: QueryRunner): Promise<void> {
    await createIndexConcurrently(runner, 'decisions', 'IX_consent_records_subject', `"consent_records" ("subject_id", "flow_id", "recorded_at")`);
    await dropIndexConcurrently(runner, 'decisions', 'IX_consent_records_chain_order');
    await dropIndexConcurrently(runner, 'decisions', 'IX_consent_records_person_page');
  }
}
