import { INBOX_RECORDS, InboxRecordsPage, InboxRecordsRequest } from '@dcr/contracts';
import { ServiceClients } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';

/**
 * One page of the records of the person the inbox token names (one organisation's with
 * `applicationId`), newest given first: at most `limit` records after `cursor` (a page's
 * `next_cursor`), read by the decisions service alone (a person can have thousands of records).
 * A cursor of another list, or changed by hand, is a 400 naming `cursor`.
 */
export function personRecordsPage(clients: ServiceClients, inboxToken: string, page: { applicationId?: string; limit: number; cursor?: string }): Promise<InboxRecordsPage> {
  const request: InboxRecordsRequest = {
    inbox_token: inboxToken,
    ...(page.applicationId ? { application_id: page.applicationId } : {}),
    limit: page.limit,
    ...(page.cursor ? { cursor: page.cursor } : {}),
  };
  return firstValueFrom(clients.own.send<InboxRecordsPage>(INBOX_RECORDS, request));
}
