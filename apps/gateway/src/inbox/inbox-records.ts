import { INBOX_RECORDS, InboxRecordMessage, ListPart } from '@dcr/contracts';
import { everyPart, ServiceClients } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';

/**
 * Every record of the person the inbox token names (one organisation's with `applicationId`),
 * newest first, read from the decisions service in parts that each fit one message on the bus: a
 * person can have hundreds of records, of flows with many purposes.
 */
export function personRecords(clients: ServiceClients, inboxToken: string, applicationId?: string): Promise<InboxRecordMessage[]> {
  return everyPart((after) =>
    firstValueFrom(clients.own.send<ListPart<InboxRecordMessage>>(INBOX_RECORDS, { inbox_token: inboxToken, ...(applicationId ? { application_id: applicationId } : {}), ...(after ? { after } : {}) })),
  );
}
