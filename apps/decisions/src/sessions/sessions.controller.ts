import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  CancelRequest,
  CompleteReply,
  CompleteRequest,
  CreateDecisionRequest,
  DECISIONS_CANCEL,
  DECISIONS_COMPLETE,
  DECISIONS_CREATE,
  DECISIONS_EXCHANGE,
  DECISIONS_SIGN_IN,
  DECISIONS_PROOF,
  ProofReply,
  ProofRequest,
  DECISIONS_TRANSITION,
  DECISIONS_VERIFY,
  DECISIONS_VIEW,
  DecisionCreated,
  DEV_MAILBOX_LIST,
  DevMailboxRequest,
  DevMailMessage,
  ExchangeReply,
  ExchangeRequest,
  ParticipantViewMessage,
  SessionTokenRequest,
  SignInReply,
  SignInRequest,
  TransitionRequest,
  VerifyReply,
  VerifyRequest,
} from '@dcr/contracts';
import { MailTransport } from '../mail/mail-transport';
import { Completion } from './completion';
import { CreateDecision } from './create-decision';
import { ParticipantSteps } from './participant-steps';

@Controller()
export class SessionsController {
  constructor(
    private readonly create: CreateDecision,
    private readonly steps: ParticipantSteps,
    private readonly completion: Completion,
    private readonly mail: MailTransport,
  ) {}

  @MessagePattern(DECISIONS_CREATE)
  createDecision(@Payload() request: CreateDecisionRequest): Promise<DecisionCreated> {
    return this.create.execute(request);
  }

  @MessagePattern(DECISIONS_VIEW)
  view(@Payload() request: SessionTokenRequest): Promise<ParticipantViewMessage> {
    return this.steps.view(request.session_token);
  }

  @MessagePattern(DECISIONS_TRANSITION)
  transition(@Payload() request: TransitionRequest): Promise<ParticipantViewMessage> {
    return this.steps.transition(request);
  }

  @MessagePattern(DECISIONS_SIGN_IN)
  signIn(@Payload() request: SignInRequest): Promise<SignInReply> {
    return this.steps.signIn(request);
  }

  @MessagePattern(DECISIONS_PROOF)
  proof(@Payload() request: ProofRequest): Promise<ProofReply> {
    return this.steps.proof(request);
  }

  @MessagePattern(DECISIONS_CANCEL)
  cancel(@Payload() request: CancelRequest): Promise<ParticipantViewMessage> {
    return this.steps.cancel(request);
  }

  @MessagePattern(DECISIONS_COMPLETE)
  complete(@Payload() request: CompleteRequest): Promise<CompleteReply> {
    return this.completion.complete(request);
  }

  @MessagePattern(DECISIONS_VERIFY)
  verify(@Payload() request: VerifyRequest): Promise<VerifyReply> {
    return this.completion.verify(request, request.application_id);
  }

  @MessagePattern(DECISIONS_EXCHANGE)
  exchange(@Payload() request: ExchangeRequest): Promise<ExchangeReply> {
    return this.completion.exchange(request);
  }

  @MessagePattern(DEV_MAILBOX_LIST)
  mailbox(@Payload() request: DevMailboxRequest): Promise<DevMailMessage[]> {
    return this.mail.list(request);
  }
}
