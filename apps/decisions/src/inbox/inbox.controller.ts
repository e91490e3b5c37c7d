import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  INBOX_CLOSE,
  INBOX_LIST,
  INBOX_OPEN,
  INBOX_RECORDS,
  INBOX_SIGN_IN,
  INBOX_WITHDRAW,
  InboxRecordsRequest,
  InboxWithdrawRequest,
  InboxListRequest,
  InboxOpenReply,
  InboxOpenRequest,
  InboxPageMessage,
  InboxSignInRequest,
  InboxTokenRequest,
} from '@dcr/contracts';
import { PersonRecords } from '../records/person-records';
import { InboxService } from './inbox.service';

@Controller()
export class InboxController {
  constructor(
    private readonly inbox: InboxService,
    private readonly records: PersonRecords,
  ) {}

  @MessagePattern(INBOX_RECORDS)
  consentRecords(@Payload() request: InboxRecordsRequest) {
    return this.records.list(request);
  }

  @MessagePattern(INBOX_WITHDRAW)
  withdraw(@Payload() request: InboxWithdrawRequest) {
    return this.records.withdraw(request);
  }

  @MessagePattern(INBOX_SIGN_IN)
  signIn(@Payload() request: InboxSignInRequest) {
    return this.inbox.signIn(request);
  }

  @MessagePattern(INBOX_OPEN)
  open(@Payload() request: InboxOpenRequest): Promise<InboxOpenReply> {
    return this.inbox.open(request);
  }

  @MessagePattern(INBOX_LIST)
  list(@Payload() request: InboxListRequest): Promise<InboxPageMessage> {
    return this.inbox.list(request);
  }

  @MessagePattern(INBOX_CLOSE)
  async close(@Payload() request: InboxTokenRequest): Promise<{ closed: true }> {
    await this.inbox.close(request);
    return { closed: true };
  }
}
