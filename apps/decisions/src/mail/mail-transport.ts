import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DecisionsEnvironment, mailTransportOf } from '@dcr/config';
import { DevMailboxRequest, DevMailMessage } from '@dcr/contracts';
import { DomainError, newOpaqueId, normaliseEmail } from '@dcr/domain';
import { leadingWithin, SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { createTransport, Transporter } from 'nodemailer';
import { Repository } from 'typeorm';
import { DevMail } from './dev-mail.entity';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * The one way the service sends mail: SMTP (nodemailer) in production, or the development mailbox,
 * a table that `GET /_dev/mailbox` reads. Which one is configuration (`MAIL_TRANSPORT`).
 */
@Injectable()
export class MailTransport {
  private readonly logger = new Logger(MailTransport.name);
  private readonly kind: 'smtp' | 'mailbox';
  private readonly smtp?: Transporter;
  private readonly from: string;

  constructor(
    @InjectRepository(DevMail) private readonly mailbox: Repository<DevMail>,
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
  ) {
    const env = context.env as DecisionsEnvironment;
    this.kind = mailTransportOf(env);
    this.from = env.MAIL_FROM ?? 'Decision Service <no-reply@decision-service.invalid>';
    if (this.kind === 'smtp' && env.SMTP_URL) this.smtp = createTransport(env.SMTP_URL);
  }

  async send(mail: OutgoingMail): Promise<void> {
    if (this.kind === 'mailbox') {
      await this.mailbox.insert({ id: newOpaqueId('mail', 20), ...mail, sentAt: new Date() });
      return;
    }
    if (!this.smtp) throw new DomainError('service_unavailable', 'Mail is not configured (SMTP_URL)');
    try {
      await this.smtp.sendMail({ from: this.from, ...mail });
    } catch (error) {
      const failure = error as { code?: unknown; responseCode?: unknown };
      const code = typeof failure.code === 'string' ? failure.code : 'error';
      const status = typeof failure.responseCode === 'number' ? failure.responseCode : undefined;
      // The code and status only: the server's own words name the recipient's address.
      this.logger.warn(`mail to a recipient failed (${code}${status !== undefined ? ` ${status}` : ''})`);
      if (code === 'EENVELOPE' && status !== undefined && status >= 500) {
        // The mail server refused the address for good: trying again will not help, another address may.
        throw new DomainError('validation_failed', 'The mail server refused this address', [{ field: 'email', reason: 'the mail server refused this address: check it, or use another' }]);
      }
      throw new DomainError('service_unavailable', 'The mail could not be sent; try again', undefined, { retry_after: 5 });
    }
  }

  /** Development only: what the mailbox holds, newest first. */
  async list(request: DevMailboxRequest): Promise<DevMailMessage[]> {
    if (this.kind !== 'mailbox') throw new DomainError('not_found', 'There is no development mailbox here');
    const rows = await this.mailbox.find({
      where: request.to ? { to: normaliseEmail(request.to) } : {},
      order: { sentAt: 'DESC' },
      take: request.limit ?? 50,
    });
    // Newest first, no more than fit one message on the bus (a receipt mail of a large flow is tens of KB).
    return leadingWithin(rows.map((row) => ({ to: row.to, subject: row.subject, text: row.text, html: row.html, sent_at: row.sentAt.toISOString() })));
  }
}
