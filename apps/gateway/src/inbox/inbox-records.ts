import { INBOX_RECORDS, InboxRecordMessage, InboxRecordsReply } from '@dcr/contracts';
import { ServiceClients } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';

/**
 * Every record of the person the inbox token names (one organisation's with `applicationId`),
 * newest first, read from the decisions service in parts that each fit one message on the bus
 * (InboxRecordsReply): a person can have hundreds of records, of flows with many purposes.
 */
export async function personRecords(clients: ServiceClients, inboxToken: string, applicationId?: string): Promise<InboxRecordMessage[]> {
  const records: InboxRecordMessage[] = [];
  let after: string[] | undefined;
  for (;;) {
    const part = await firstValueFrom(
      clients.own.send<InboxRecordsReply>(INBOX_RECORDS, { inbox_token: inboxToken, ...(applicationId ? { application_id: applicationId } : {}), ...(after ? { after } : {}) }),
    );
    records.push(...part.records);
    const last = part.records.at(-1);
    if (!part.more || !last) return records;
    after = [last.recorded_at, last.record_id];
  }
}
