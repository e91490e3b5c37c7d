import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DEV_MAILBOX_LIST, DevMailMessage } from '@dcr/contracts';
import { DomainError } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { IsEmail, IsOptional } from 'class-validator';
import { firstValueFrom } from 'rxjs';
import { PublicRoute } from '../auth/auth.decorators';

class MailboxQueryDto {
  @IsOptional()
  @IsEmail()
  to?: string;
}

/**
 * Development only (NODE_ENV=development): the mail the country sent, newest first, so that a person
 * can sign in on a machine without SMTP. Anywhere else it does not exist.
 */
@ApiExcludeController()
@PublicRoute()
@Controller('_dev/mailbox')
export class DevMailboxController {
  constructor(
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Get()
  async list(@Query() query: MailboxQueryDto): Promise<{ data: DevMailMessage[] }> {
    if (this.context.env.NODE_ENV !== 'development') throw new DomainError('route_not_found', 'Route GET /_dev/mailbox not found');
    const data = await firstValueFrom(this.clients.own.send<DevMailMessage[]>(DEV_MAILBOX_LIST, { to: query.to }));
    return { data };
  }
}
