import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { isPersonPage, sendPageError } from '../hosted/page-errors';
import { sendError } from './error-responder';

/** Every error leaving a controller, guard or pipe goes out in the contract's shape; on a person's page, as a page. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    if (isPersonPage(request.url)) return sendPageError(exception, request, http.getResponse<FastifyReply>(), this.logger);
    sendError(exception, request, http.getResponse<FastifyReply>(), this.logger);
  }
}
