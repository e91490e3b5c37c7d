import { Inject, Injectable, Logger } from '@nestjs/common';
import { DecisionsEnvironment } from '@dcr/config';
import { FlowTerms, normaliseEmail, RecordedPurpose, recordsPageUrl } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { MailTransport } from '../mail/mail-transport';
import { receiptMail } from './receipt-mail';

/**
 * The receipt mail a person gets when their consent is recorded: what they agreed to and the link
 * to their records page. It goes out after the commit, best effort: the record stands whether or
 * not the mail does (a failure is logged), and the person can always reach their records.
 */
@Injectable()
export class ReceiptMailer {
  private readonly logger = new Logger(ReceiptMailer.name);
  private readonly base?: string;

  constructor(
    private readonly mail: MailTransport,
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
  ) {
    this.base = (context.env as DecisionsEnvironment).PUBLIC_BASE_URL;
  }

  send(email: string, terms: FlowTerms, record: { record_id: string; application_id: string; purposes: Record<string, Pick<RecordedPurpose, 'status'>> }): void {
    // Without a public origin there is no page to link to (development without PUBLIC_BASE_URL).
    if (!this.base) return;
    const labels = new Map(terms.purposes.map((purpose) => [purpose.key, purpose.label]));
    const granted = Object.entries(record.purposes).filter(([, purpose]) => purpose.status === 'granted').map(([key]) => labels.get(key) ?? key);
    const mail = receiptMail(terms.locale, { title: terms.title ?? terms.name, granted, recordId: record.record_id, recordsUrl: recordsPageUrl(this.base, record.application_id, 'email') });
    this.mail.send({ to: normaliseEmail(email), ...mail }).catch((error) => this.logger.warn(`receipt mail for ${record.record_id} not sent: ${(error as Error).message}`));
  }
}
