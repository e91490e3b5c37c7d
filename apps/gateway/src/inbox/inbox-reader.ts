import { Inject, Injectable } from '@nestjs/common';
import { GatewayEnvironment } from '@dcr/config';
import { INBOX_LIST, InboxListRequest, InboxPageMessage } from '@dcr/contracts';
import { parseLimit } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import type { FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { CredentialIndex } from '../connect/credential-index';
import { publicBaseUrl } from '../http/public-url';
import { InboxQueryDto } from './inbox.dto';

/** One page of a person's inbox, with the application names and decision URLs filled in. */
@Injectable()
export class InboxReader {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async page(inboxToken: string, query: InboxQueryDto, request: FastifyRequest) {
    const page = await firstValueFrom(
      this.clients.own.send<InboxPageMessage, InboxListRequest>(INBOX_LIST, {
        inbox_token: inboxToken,
        kind: query.kind,
        trigger: query.trigger,
        application_id: query.application_id,
        sort: query.sort ?? 'deadline',
        limit: parseLimit(query.limit),
        cursor: query.cursor || undefined,
      }),
    );
    const base = publicBaseUrl(this.context.env as GatewayEnvironment, request);
    return {
      email: page.email,
      data: page.data.map(({ application_id, ...item }) => ({
        ...item,
        decision_url: `${base}/decisions/${item.session_token}`,
        application: { id: application_id, name: this.index.application(application_id)?.name ?? '' },
      })),
      next_cursor: page.next_cursor,
    };
  }
}
