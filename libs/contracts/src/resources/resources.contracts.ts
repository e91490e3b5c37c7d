import { Type } from 'class-transformer';
import { IsIn, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { APPLICATION_ID } from '../patterns';

/**
 * Whether a resource exists in its home country, so that a country that is asked for another
 * country's resource answers 421 `wrong_country` only for one that exists (and that the caller may
 * see), and a plain 404 for anything else, as the contract says. Only the opaque id travels, and the
 * answer is a yes or a no. A `consent_record` is a record that has a consent receipt (a Record API,
 * capture, import or form-builder record, or a consent session's; not an approval's): the gateway
 * asks for it when the receipt is not frozen yet, to tell a receipt on its way from none. A `flow`
 * is in every country (flows are configuration): asked of the own country, for an API token that
 * names a flow of another application of its account.
 */
export const RESOURCE_KINDS = ['record', 'consent_record', 'capture', 'form_connection', 'template', 'import', 'session', 'subject', 'flow'] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];

/** decisions (own country): which application a resource belongs to, or null. Every kind above is the decisions service's. */
export const DECISIONS_RESOURCE_OWNER = 'decisions.resources.owner';
/** gateway → peer country's gateway: does this resource exist there, for this caller? */
export const GATEWAY_RESOURCE_EXISTS = 'gateway.resources.exists';

export class ResourceOwnerRequest {
  @IsIn(RESOURCE_KINDS)
  kind: ResourceKind;

  /** The id (or, for a session or a capture, the token) as the caller addressed it. */
  @IsString()
  @Length(1, 200)
  id: string;
}

export interface ResourceOwnerReply {
  application_id: string | null;
}

/** Whom the resource must be visible to: an API token's account, or a publishable key's application; neither for a token-addressed resource. */
export class ResourceAudience {
  @IsOptional()
  @IsString()
  @Length(1, 100)
  account_id?: string;

  @IsOptional()
  @Matches(APPLICATION_ID)
  application_id?: string;
}

export class ResourceExistsRequest extends ResourceOwnerRequest {
  @IsOptional()
  @ValidateNested()
  @Type(() => ResourceAudience)
  visible_to?: ResourceAudience;
}

export interface ResourceExistsReply {
  exists: boolean;
  /**
   * The application it belongs to, when it exists for the audience asked about (an opaque id of
   * configuration, never personal data): what an API token acting for its account acts for.
   */
  application_id?: string;
}
