import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  INBOX_CLOSE,
  INBOX_LIST,
  INBOX_OPEN,
  INBOX_SIGN_IN,
  InboxListRequest,
  InboxOpenReply,
  InboxOpenRequest,
  InboxPageMessage,
  InboxSignInRequest,
  InboxTokenRequest,
} from '@dcr/contracts';
import { InboxService } from './inbox.service';

@Controller()
export class InboxController {
  constructor(private readonly inbox: InboxService) {}

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
