import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { PERSON_WITHDRAWAL_CHANNELS, PersonWithdrawalChannel } from '@dcr/domain';
import { ListQueryDto } from '../connect/connect.dto';

export class InboxSignInDto {
  @ApiProperty({ example: 'ada@example.com' })
  @IsEmail()
  email: string;

  @ApiPropertyOptional({ example: 'de', description: "The code mail's language (English or German), as the session sign-in takes it; else the request's Accept-Language" })
  @IsOptional()
  @Matches(/^[a-z]{2}(-[A-Z]{2})?$/, { message: 'locale must be a language tag such as en or de-DE' })
  locale?: string;
}

export class InboxOpenDto {
  @ApiProperty({ example: 'ada@example.com' })
  @IsEmail()
  email: string;

  @ApiProperty({ example: '123456' })
  @IsString()
  @Length(1, 16)
  code: string;
}

export class InboxSignInReplyDto {
  @ApiProperty({ enum: [true], description: 'A code was mailed to the address (`GET /_dev/mailbox` in development)' }) sent: true;
  @ApiProperty({ format: 'date-time', description: 'Until when the code can be traded for an inbox token (10 minutes)' }) expires_at: string;
}

export class InboxOpenReplyDto {
  @ApiProperty({
    example: 'inb_us0123456789abcdefghijklmnopqrstuvwxyzABCDE',
    description: "The inbox token: `Authorization: Bearer <inbox_token>` on the inbox routes of the country that issued it (opaque; another country answers 421 `wrong_country` with that country)",
  })
  inbox_token: string;
  @ApiProperty({ format: 'date-time', description: 'When the inbox token stops working (12 hours)' }) expires_at: string;
}

export class InboxQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ enum: ['consent', 'approval'] })
  @IsOptional()
  @IsIn(['consent', 'approval'])
  kind?: 'consent' | 'approval';

  @ApiPropertyOptional({ enum: ['scope', 'action', 'value', 'time', 'escalation', 'reputation'], description: 'Approvals whose authority bound made the agent ask' })
  @IsOptional()
  @IsIn(['scope', 'action', 'value', 'time', 'escalation', 'reputation'])
  trigger?: string;

  @ApiPropertyOptional({ example: 'tp_dev_0123456789abcdef' })
  @IsOptional()
  @Matches(/^tp_[a-z]{2,8}_[0-9a-z]{16}$/, { message: 'application_id must be a tp_ id' })
  application_id?: string;

  @ApiPropertyOptional({ enum: ['deadline', 'newest'], default: 'deadline', description: 'deadline: soonest deadline first (none last); newest: newest first' })
  @IsOptional()
  @IsIn(['deadline', 'newest'])
  sort?: 'deadline' | 'newest';
}

/**
 * The person's records list: `application_id`, `limit`, `cursor` and nothing else (a misspelt
 * `applicationid` is refused by name, not ignored into every organisation's records). The
 * application id's form is checked by the route, which names it.
 */
export class InboxRecordsQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ example: 'tp_dev_0123456789abcdef', description: "One organisation's records; every organisation's without it" })
  @IsOptional()
  @IsString({ message: 'application_id must be a tp_ id, given once' })
  application_id?: string;
}

export class InboxItemDto {
  @ApiProperty() session_token: string;
  @ApiProperty({ description: 'The decision page: /decisions/<session_token>' }) decision_url: string;
  @ApiProperty({ enum: ['consent', 'approval'] }) kind: string;
  @ApiProperty({ example: 'pending' }) status: string;
  @ApiProperty() title: string;
  @ApiProperty({ example: { id: 'tp_dev_0123456789abcdef', name: 'Acme' } }) application: { id: string; name: string };
  @ApiProperty({ nullable: true, type: String }) flow_id: string | null;
  @ApiProperty({ nullable: true, type: String }) trigger: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) deadline_at: string | null;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class InboxWithdrawDto {
  @ApiPropertyOptional({ example: 'newsletter', description: 'One purpose; absent withdraws every purpose still granted' })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  purpose?: string;

  @ApiPropertyOptional({
    enum: [...PERSON_WITHDRAWAL_CHANNELS],
    default: 'own_records',
    description:
      "Where the person withdrew from, as the receipt's `event_channel` and the webhooks' `channel` state it: `receipt_link` (they came through the receipt's `withdrawal_method`, which carries `via=receipt`), `email_link` (the receipt mail's link, `via=email`), else `own_records`",
  })
  @IsOptional()
  @IsIn(PERSON_WITHDRAWAL_CHANNELS)
  channel?: PersonWithdrawalChannel;
}

/** A purpose of a record on the person's records page: its label and its current status. */
export class InboxRecordPurposeDto {
  @ApiProperty({ example: 'Newsletter', description: "The purpose's label in the flow version" }) label: string;
  @ApiProperty({ enum: ['granted', 'declined', 'withdrawn', 'expired', 'objected', 'noticed'] }) status: string;
}

/** A consent record as the signed-in person sees it. */
export class InboxRecordDto {
  @ApiProperty({ example: 'rec_us0123456789abcdefghij' }) record_id: string;
  @ApiProperty({ example: 'tp_dev_0123456789abcdef' }) application_id: string;
  @ApiProperty({ example: 'flw_dev_0123456789abcdef' }) flow_id: string;
  @ApiProperty({ example: 'Signup form', description: "The flow's name" }) title: string;
  @ApiProperty({ format: 'date-time', description: "When the person gave it (the record's `captured_at`; a hosted consent's completion): the list's order" }) captured_at: string;
  @ApiProperty({ format: 'date-time', description: 'When the service recorded it (for imported history, the import: later than `captured_at`)' }) recorded_at: string;
  @ApiProperty({ example: 'controller_attested', description: 'How the decision reached the service; `hosted` for a consent given on the hosted pages' }) channel: string;
  @ApiProperty({ enum: ['per_purpose', 'whole'], description: '`per_purpose`: purpose by purpose or all at once (every record, also a consent given on the hosted pages); `whole` (withdrawn all at once only) is not given any more' })
  withdrawal: 'per_purpose' | 'whole';
  @ApiPropertyOptional({ example: 'rec_us0123456789abcdefghik', description: "The person's newer record of the same flow that replaced this one (withdraw there)" }) superseded_by?: string;
  @ApiPropertyOptional({
    type: [String],
    example: ['analytics'],
    description: 'On a replaced record: the purposes still given through it, which no newer record of the flow holds (a newer flow version dropped them): withdrawn here',
  })
  withdrawable?: string[];
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/InboxRecordPurposeDto' } }) purposes: Record<string, InboxRecordPurposeDto>;
}

/** The confirmation of a withdrawal. */
export class InboxWithdrawReplyDto {
  @ApiProperty({ example: 'rec_us0123456789abcdefghij' }) record_id: string;
  @ApiProperty({ type: [String], example: ['newsletter'], description: 'The purposes this withdrawal took back' }) withdrawn: string[];
  @ApiProperty({ format: 'date-time' }) withdrawn_at: string;
  @ApiProperty({ type: InboxRecordDto, description: 'The record as the records list shows it now (its purposes with their statuses)' })
  record: InboxRecordDto;
}
