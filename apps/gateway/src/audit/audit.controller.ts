import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  AUDIT_EXPORT,
  AUDIT_INCLUSION_PROOF,
  AUDIT_LIST,
  AuditExportPart,
  AuditExportReply,
  AuditInclusionMessage,
  AuditListReply,
  AuditListRequest,
} from '@dcr/contracts';
import { decodeCursor, DomainError, encodeCursor, Page, parseLimit } from '@dcr/domain';
import { ServiceClients } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { CredentialIndex } from '../connect/credential-index';
import { ApiConflict, ApiErrorResponses, ApiPage } from '../openapi/openapi.decorators';
import { AuditEntryDto, AuditExportDto, AuditQueryDto, InclusionProofDto, InclusionQueryDto } from './audit.dto';

/**
 * An application's audit trail in this country: every decision, state change, withdrawal and
 * configuration change, hash-chained. Reading it needs the `audit:verify` scope.
 */
@ApiTags('Audit')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('admin', 'api_token')
@Controller('api/v1/applications/:application_id/audit')
export class AuditController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
  ) {}

  @Get()
  @RequireScopes('audit:verify')
  @ApiOperation({
    summary: 'List audit entries, oldest first',
    description: 'Filter by type (comma-separated) and by occurred_at (from inclusive, to exclusive). The hashing rule is in the export and in docs/audit.md.',
  })
  @ApiPage(AuditEntryDto)
  async list(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Query() query: AuditQueryDto,
  ): Promise<Page<AuditEntryDto>> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const limit = parseLimit(query.limit);
    const cursor = decodeCursor<{ after_seq?: unknown }>(query.cursor);
    if (cursor && !(Number.isSafeInteger(cursor.after_seq) && (cursor.after_seq as number) >= 0)) {
      throw new DomainError('invalid_request', 'The cursor does not belong to this list', [{ field: 'cursor', reason: 'unknown position' }]);
    }
    const page = await firstValueFrom(
      this.clients.own.send<AuditListReply, AuditListRequest>(AUDIT_LIST, {
        application_id: applicationId,
        types: query.type,
        from: query.from,
        to: query.to,
        after_seq: cursor?.after_seq as number | undefined,
        limit,
      }),
    );
    const last = page.entries[page.entries.length - 1];
    return { data: page.entries, next_cursor: page.has_more && last ? encodeCursor({ after_seq: last.seq }) : null };
  }

  @Get('export')
  @RequireScopes('audit:verify')
  @ApiOperation({
    summary: 'Export the whole chain with the newest anchor and inclusion proofs',
    description:
      'Everything an auditor needs offline: the entries, the hashing rule, the leaf rule, the newest anchor (a signed, ' +
      'witnessed checkpoint) and an inclusion proof of every entry it covers. Check it with `npx dcr-audit-verify`.',
  })
  @ApiOkResponse({ type: AuditExportDto })
  async export(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string): Promise<AuditExportReply> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    // In parts, each one message on the bus (a trail of thousands of entries is more), against the
    // anchor the first part answered; put together here into the one export.
    const read = (part: { after_seq?: number; tree_size?: number }) =>
      firstValueFrom(this.clients.own.send<AuditExportPart>(AUDIT_EXPORT, { application_id: applicationId, ...part }));
    const { next_after_seq: next, ...exported } = await read({});
    for (let after = next; after !== undefined; ) {
      const part = await read({ after_seq: after, tree_size: exported.anchor?.tree_size ?? 0 });
      exported.entries.push(...part.entries);
      exported.inclusion_proofs.push(...part.inclusion_proofs);
      after = part.next_after_seq;
    }
    return exported;
  }

  @ApiConflict('No anchor covers the entry yet (`retry: true`): ask again after the next anchor')
  @Get('entries/:entry_id/inclusion_proof')
  @RequireScopes('audit:verify')
  @ApiOperation({ summary: 'Inclusion proof of one entry in the tree of an anchor (the newest by default)' })
  @ApiOkResponse({ type: InclusionProofDto })
  inclusion(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Param('entry_id') entryId: string,
    @Query() query: InclusionQueryDto,
  ): Promise<AuditInclusionMessage> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    if (!/^aud_[0-9a-z]{16,32}$/.test(entryId)) throw new DomainError('not_found', 'Audit entry was not found');
    return firstValueFrom(
      this.clients.own.send<AuditInclusionMessage>(AUDIT_INCLUSION_PROOF, { application_id: applicationId, entry_id: entryId, tree_size: query.tree_size }),
    );
  }
}
