import { Controller, Get, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { DomainError } from '@dcr/domain';
import { AcceptCredentials } from '../auth/auth.decorators';
import { ApiErrorResponses, ApiNotImplemented } from '../openapi/openapi.decorators';

const NOT_BUILT = 'is not implemented yet: no personal data crosses a border today (only opaque ids, statuses and counts), so there is no transfer to register or prove';

/**
 * The specification's cross-border endpoints (Endpoints, Cross-border): the transfer register, the
 * residency posture and their evidence packages, and presentations of another country's credentials.
 * None is built yet; each answers 501 naming what, so a client learns that rather than a 404.
 */
@ApiTags('Cross-border')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('admin', 'api_token')
@Controller('api/v1')
export class CrossBorderController {
  @Get('transfer_register')
  @ApiOperation({ summary: 'Not implemented yet (501): the register of cross-border transfers, each with lawful basis and adequacy verdict' })
  @ApiNotImplemented('The transfer register is not built yet')
  transferRegister(): never {
    throw new DomainError('not_implemented', `The transfer register ${NOT_BUILT}`);
  }

  @Post('transfer_register/evidence_package')
  @ApiOperation({ summary: 'Not implemented yet (501): a signed evidence package of the transfer register' })
  @ApiNotImplemented('The transfer register evidence package is not built yet')
  transferEvidence(): never {
    throw new DomainError('not_implemented', `The transfer register's evidence package ${NOT_BUILT}`);
  }

  @Get('residency_posture')
  @ApiOperation({ summary: "Not implemented yet (501): where subjects' data is stored, per country, with an assurance status" })
  @ApiNotImplemented('The residency posture is not built yet')
  residencyPosture(): never {
    throw new DomainError('not_implemented', 'The residency posture is not implemented yet; docs/architecture.md (How countries are separated) describes where data lives');
  }

  @Post('residency_posture/evidence_package')
  @ApiOperation({ summary: 'Not implemented yet (501): a signed proof of residency' })
  @ApiNotImplemented('The proof of residency is not built yet')
  residencyEvidence(): never {
    throw new DomainError('not_implemented', 'The signed proof of residency is not implemented yet');
  }

  @Post('presentations')
  @ApiOperation({ summary: "Not implemented yet (501): verifying a credential presented from another country against the issuing country's published key" })
  @ApiNotImplemented('Presentations are not built yet')
  presentations(): never {
    throw new DomainError('not_implemented', 'Verifying presented credentials is not implemented yet; the service issues no verifiable credentials today');
  }
}
