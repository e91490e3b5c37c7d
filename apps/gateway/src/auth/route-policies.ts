import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ControllerMethod } from '../http/controller-methods';
import { ACCEPTED_CREDENTIALS, ANSWER_NOT_KEPT, PUBLIC_ROUTE, REQUIRED_ANY_SCOPE, REQUIRED_SCOPES } from './auth.decorators';
import { CredentialKind } from './principal';

/** What a route asks of its caller, from its decorators (method first, then controller). */
export interface RoutePolicy {
  public: boolean;
  accepted: CredentialKind[];
  scopes: string[];
  /** Scopes of which an API token needs one besides `scopes` (RequireAnyScope); empty: none. */
  anyScope: string[];
  /** Whether a POST's answer may be kept and replayed under an Idempotency-Key (AnswerNotKept: no). */
  keepsAnswers: boolean;
}

/** The authentication policy of an HTTP route, read once (at start) from its controller's metadata. */
@Injectable()
export class RoutePolicies {
  constructor(private readonly reflector: Reflector) {}

  of({ controller, method }: ControllerMethod): RoutePolicy {
    const targets = [method, controller];
    return {
      public: this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) ?? false,
      accepted: this.reflector.getAllAndOverride<CredentialKind[]>(ACCEPTED_CREDENTIALS, targets) ?? ['api_token'],
      scopes: this.reflector.getAllAndOverride<string[]>(REQUIRED_SCOPES, targets) ?? [],
      anyScope: this.reflector.getAllAndOverride<string[]>(REQUIRED_ANY_SCOPE, targets) ?? [],
      keepsAnswers: !(this.reflector.getAllAndOverride<boolean>(ANSWER_NOT_KEPT, targets) ?? false),
    };
  }
}
