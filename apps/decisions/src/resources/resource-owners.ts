import { Controller, Injectable } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DECISIONS_RESOURCE_OWNER, ResourceKind, ResourceOwnerReply, ResourceOwnerRequest } from '@dcr/contracts';
import { hashCredential } from '@dcr/domain';
import { DataSource } from 'typeorm';

/**
 * Which application a resource of this country belongs to, by the id (or token) it is addressed
 * with, one indexed lookup each: for a peer country's gateway, which answers a wrong door 421 only
 * for a resource that exists (GATEWAY_RESOURCE_EXISTS). A record is a Record API record or a hosted
 * session's (a consent record: a Record API record or a consent session's, whose events freeze a
 * consent receipt); a capture or a session is found by its token's hash, as each keeps it. A flow's
 * versions all belong to its application.
 */
const OWNER_SQL: Record<ResourceKind, string> = {
  record: `SELECT "application_id" FROM "decisions"."consent_records" WHERE "record_id" = $1
           UNION ALL SELECT "application_id" FROM "decisions"."decision_sessions" WHERE "record_id" = $1 LIMIT 1`,
  consent_record: `SELECT "application_id" FROM "decisions"."consent_records" WHERE "record_id" = $1
           UNION ALL SELECT "application_id" FROM "decisions"."decision_sessions" WHERE "record_id" = $1 AND "kind" = 'consent' LIMIT 1`,
  capture: `SELECT "application_id" FROM "decisions"."captures" WHERE "token_hash" = $1`,
  form_connection: `SELECT "application_id" FROM "decisions"."form_connections" WHERE "id" = $1`,
  template: `SELECT "application_id" FROM "decisions"."preview_templates" WHERE "id" = $1`,
  import: `SELECT "application_id" FROM "decisions"."consent_imports" WHERE "id" = $1`,
  session: `SELECT "application_id" FROM "decisions"."decision_sessions" WHERE "token_hash" = $1`,
  subject: `SELECT "application_id" FROM "decisions"."subjects" WHERE "id" = $1`,
  flow: `SELECT "application_id" FROM "decisions"."flow_versions" WHERE "id" = $1 LIMIT 1`,
};

@Injectable()
export class ResourceOwners {
  constructor(private readonly dataSource: DataSource) {}

  async owner(kind: ResourceKind, id: string): Promise<string | null> {
    // Captures and sessions keep their tokens as hashes only.
    const rows: Array<{ application_id: string }> = await this.dataSource.query(OWNER_SQL[kind], [kind === 'capture' || kind === 'session' ? hashCredential(id) : id]);
    return rows[0]?.application_id ?? null;
  }
}

@Controller()
export class ResourceOwnersController {
  constructor(private readonly owners: ResourceOwners) {}

  @MessagePattern(DECISIONS_RESOURCE_OWNER)
  async owner(@Payload() request: ResourceOwnerRequest): Promise<ResourceOwnerReply> {
    return { application_id: await this.owners.owner(request.kind, request.id) };
  }
}
