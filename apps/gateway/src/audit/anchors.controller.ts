import { Body, Controller, Get, Header, HttpCode, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  AUDIT_ANCHOR_NOW,
  AUDIT_ANCHORS,
  AUDIT_CONSISTENCY_PROOF,
  AUDIT_WITNESS_ADD_CHECKPOINT,
  WITNESS_REQUEST_MAX,
  WITNESS_REQUEST_MIN,
  AuditAnchorMessage,
  AuditAnchorsReply,
  AuditConsistencyMessage,
  WitnessAddCheckpointReply,
} from '@dcr/contracts';
import { decodeCursor, DomainError, encodeCursor, Page, parseLimit } from '@dcr/domain';
import { ServiceClients } from '@dcr/service-kit';
import type { FastifyReply } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, PublicRoute } from '../auth/auth.decorators';
import { ListQueryDto } from '../connect/connect.dto';
import { ApiErrorResponses, ApiPage } from '../openapi/openapi.decorators';
import { witnessConfigurationWithReceiptKeys } from './witness-configuration';
import { AnchorDto, ConsistencyProofDto, ConsistencyQueryDto } from './audit.dto';

/**
 * The country's anchors: signed checkpoints of the Merkle tree over every audit entry, cosigned by
 * witnesses. They hold no personal data (a size and a root), so any API token may read them.
 */
@ApiTags('Audit')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('admin', 'api_token')
@Controller('api/v1/anchors')
export class AnchorsController {
  constructor(private readonly clients: ServiceClients) {}

  @Get()
  @ApiOperation({ summary: 'Anchors, newest first, with their witness receipts' })
  @ApiPage(AnchorDto)
  async list(@Query() query: ListQueryDto): Promise<Page<AuditAnchorMessage>> {
    const limit = parseLimit(query.limit);
    const cursor = decodeCursor<{ before?: unknown }>(query.cursor);
    if (cursor && !(typeof cursor.before === 'string' && /^anc_[0-9a-z]{16,32}$/.test(cursor.before))) {
      throw new DomainError('invalid_request', 'The cursor does not belong to this list', [{ field: 'cursor', reason: 'unknown position' }]);
    }
    const page = await firstValueFrom(this.clients.own.send<AuditAnchorsReply>(AUDIT_ANCHORS, { limit, before: cursor?.before }));
    const last = page.anchors[page.anchors.length - 1];
    return { data: page.anchors, next_cursor: page.has_more && last ? encodeCursor({ before: last.id }) : null };
  }

  @Get('consistency_proof')
  @ApiOperation({ summary: 'Consistency proof between two tree sizes (two anchors), with both roots' })
  @ApiOkResponse({ type: ConsistencyProofDto })
  consistency(@Query() query: ConsistencyQueryDto): Promise<AuditConsistencyMessage> {
    return firstValueFrom(this.clients.own.send<AuditConsistencyMessage>(AUDIT_CONSISTENCY_PROOF, { from_size: query.from_size, to_size: query.to_size }));
  }

  @Post()
  @AcceptCredentials('admin')
  @ApiOperation({
    summary: 'Anchor now (operators): sign a checkpoint of the tree as it is and ask the witnesses to cosign it',
    description: 'Answers the new anchor, or the newest one when no entry was appended since. Anchors are otherwise made every ANCHOR_INTERVAL.',
  })
  @ApiOkResponse({ type: AnchorDto })
  @HttpCode(200)
  async anchorNow(): Promise<AuditAnchorMessage> {
    const anchor = await firstValueFrom(this.clients.own.send<AuditAnchorMessage | null>(AUDIT_ANCHOR_NOW, {}));
    if (!anchor) throw new DomainError('conflict', 'The trail is empty; there is nothing to anchor yet');
    return anchor;
  }
}

/**
 * Published keys and this country's witness endpoint (C2SP tlog-witness), which the other countries'
 * logs, or any log this witness knows, call to have a checkpoint cosigned.
 */
@ApiTags('Audit')
@PublicRoute()
@Controller()
export class WitnessController {
  constructor(private readonly clients: ServiceClients) {}

  @Get('.well-known/witness-configuration')
  @Header('cache-control', 'public, max-age=300')
  @ApiOperation({
    summary: 'The log\'s checkpoint keys and the witness\'s cosignature keys (C2SP verifier keys), and the receipt signing keys (receipt_keys), current and retired',
  })
  configuration() {
    return witnessConfigurationWithReceiptKeys(this.clients);
  }

  @Post('witness/add-checkpoint')
  @ApiConsumes('text/plain')
  @ApiOperation({ summary: 'C2SP tlog-witness add-checkpoint: old size, consistency proof, signed checkpoint; answers cosignature lines' })
  @ApiBody({ schema: { type: 'string', description: 'The add-checkpoint request: `old <size>`, the consistency proof lines, a blank line, the signed checkpoint' } })
  async addCheckpoint(@Body() body: unknown, @Res() reply: FastifyReply): Promise<void> {
    if (typeof body !== 'string') throw new DomainError('unsupported_media_type', 'Send the tlog-witness request as text/plain');
    // tlog-witness keeps 422 for a failed consistency proof (a fork); anything malformed is a 400 in its own plain text.
    if (body.length < WITNESS_REQUEST_MIN || body.length > WITNESS_REQUEST_MAX) {
      void reply.status(400).type('text/plain; charset=utf-8').send(`malformed add-checkpoint request: ${body.length < WITNESS_REQUEST_MIN ? 'too short' : 'larger than 64 KiB'}\n`);
      return;
    }
    const answer = await firstValueFrom(this.clients.own.send<WitnessAddCheckpointReply>(AUDIT_WITNESS_ADD_CHECKPOINT, { body }));
    void reply.status(answer.status).type(answer.content_type).send(answer.body);
  }
}
