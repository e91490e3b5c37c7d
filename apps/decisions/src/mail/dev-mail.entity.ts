import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** Mail "sent" by the development mailbox transport, readable at GET /_dev/mailbox. */
@Entity({ name: 'dev_mailbox' })
@Index('IX_dev_mailbox_to', ['to', 'sentAt'])
export class DevMail {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'to_address', type: 'text' })
  to: string;

  @Column({ type: 'text' })
  subject: string;

  @Column({ type: 'text' })
  text: string;

  @Column({ type: 'text' })
  html: string;

  @Column({ name: 'sent_at', type: 'timestamptz' })
  sentAt: Date;
}
