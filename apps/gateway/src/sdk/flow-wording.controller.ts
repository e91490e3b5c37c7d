import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { FLOWS_GET, FlowMessage } from '@dcr/contracts';
import { DomainError, FlowTerms, isFlowId, notFound } from '@dcr/domain';
import { ServiceClients } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { canAccessApplication, Principal } from '../auth/principal';
import { CredentialIndex } from '../connect/credential-index';
import { ApiErrorResponses } from '../openapi/openapi.decorators';
import { FlowWordingDto, PurposeWordingDto } from './sdk.dto';

/**
 * The published wording of a flow's purposes, for the capture snippet's `wording` option: the browser
 * reads it with the publishable key (from an allowed origin) and writes it into the form's labels.
 * Flow terms are configuration, not personal data; only the active version is shown.
 */
@ApiTags('Flows')
@ApiExtraModels(PurposeWordingDto)
@ApiErrorResponses()
@Controller()
export class FlowWordingController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
  ) {}

  @Get('api/v1/flows/:flow_id/wording')
  @AcceptCredentials('publishable_key', 'api_token')
  @RequireScopes('flows:read')
  @ApiSecurity('publishable_key')
  @ApiBearerAuth()
  @ApiOperation({
    summary: "The published wording of an active flow's purposes (publishable key from an allowed origin, or API token)",
    description: 'For writing the published label into a form (the client script’s forms.attach `wording`). A draft, another application’s flow or an unknown id is 404.',
  })
  @ApiOkResponse({ type: FlowWordingDto })
  async wording(@CurrentPrincipal() principal: Principal, @Param('flow_id') flowId: string): Promise<FlowWordingDto> {
    if (!isFlowId(flowId)) throw notFound('Flow');
    let flow: FlowMessage;
    try {
      flow = await firstValueFrom(this.clients.own.send<FlowMessage>(FLOWS_GET, { flow_id: flowId, active: true }));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') throw notFound('Flow');
      throw error;
    }
    const application = this.index.application(flow.application_id);
    // Another application's flow answers exactly like a missing one.
    if (!application || !canAccessApplication(principal, application)) throw notFound('Flow');
    const terms = flow.terms as unknown as FlowTerms;
    return {
      flow_id: flow.id,
      version: flow.version,
      locale: terms.locale,
      title: terms.title,
      purposes: Object.fromEntries(
        terms.purposes.map((purpose) => [
          purpose.key,
          { label: purpose.label, description: purpose.description, basis: purpose.basis, mechanism: purpose.mechanism, required: purpose.required, takes_decision: purpose.takes_decision },
        ]),
      ),
    };
  }
}
