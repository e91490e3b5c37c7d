import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsISO8601, IsOptional, Matches, Min } from 'class-validator';
import { ListQueryDto } from '../connect/connect.dto';

const toList = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.split(',').map((item) => item.trim()).filter(Boolean) : value;

export class AuditQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ description: 'Only these event types (comma-separated or repeated), e.g. consent.granted,decision.state_changed' })
  @IsOptional()
  @Transform(toList)
  @IsArray()
  @ArrayMaxSize(20)
  @Matches(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, { each: true, message: 'type must be event types such as consent.granted' })
  type?: string[];

  @ApiPropertyOptional({ format: 'date-time', description: 'Entries that occurred at or after this instant' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date-time' })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Entries that occurred before this instant' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date-time' })
  to?: string;
}

export class InclusionQueryDto {
  @ApiPropertyOptional({ description: 'Prove against this tree size (an anchor\'s); defaults to the newest anchor' })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'tree_size must be an integer' })
  @Min(1, { message: 'tree_size must be at least 1' })
  tree_size?: number;
}

export class ConsistencyQueryDto {
  @ApiProperty({ description: 'The older tree size (an anchor\'s tree_size)' })
  @Type(() => Number)
  @IsInt({ message: 'from_size must be an integer' })
  @Min(1, { message: 'from_size must be at least 1' })
  from_size: number;

  @ApiProperty({ description: 'The newer tree size' })
  @Type(() => Number)
  @IsInt({ message: 'to_size must be an integer' })
  @Min(1, { message: 'to_size must be at least 1' })
  to_size: number;
}

export class AuditActorDto {
  @ApiProperty({ enum: ['application', 'participant', 'host', 'system', 'operator', 'agent'] }) type: string;
  @ApiPropertyOptional({ description: 'An opaque id when known (a subject id, a token id)' }) id?: string;
}

export class AuditEntryDto {
  @ApiProperty({ description: 'Position in the application\'s chain in this country, from 1, no gaps' }) seq: number;
  @ApiProperty({ example: 'aud_0123456789abcdefghij' }) entry_id: string;
  @ApiProperty({ example: 'consent.granted' }) event_type: string;
  @ApiProperty({ type: AuditActorDto }) actor: AuditActorDto;
  @ApiProperty({ format: 'date-time' }) occurred_at: string;
  @ApiProperty({ description: 'Lower-case hex SHA-256 of the RFC 8785 bytes of the event payload' }) payload_digest: string;
  @ApiProperty({ description: 'The hash of the entry with seq - 1; 64 zeros for seq 1' }) prev_hash: string;
  @ApiProperty({ description: 'Lower-case hex SHA-256 of the RFC 8785 bytes of this object without hash' }) hash: string;
}

export class WitnessReceiptDto {
  @ApiProperty({ description: 'The witness\'s key name' }) witness: string;
  @ApiProperty({ description: 'Base64 of key id (4 bytes) ‖ timestamp (8, big-endian) ‖ Ed25519 signature (64), C2SP tlog-cosignature' }) signature: string;
  @ApiProperty({ format: 'date-time' }) signed_at: string;
  @ApiProperty({ description: 'The cosignature as a C2SP signed-note signature line' }) cosignature: string;
}

export class AnchorDto {
  @ApiProperty({ example: 'anc_0123456789abcdefghij' }) id: string;
  @ApiProperty({ example: 'US' }) country: string;
  @ApiProperty({ example: 'dcr.invalid/audit/us' }) origin: string;
  @ApiProperty({ description: 'Lower-case hex RFC 6962 root of the country\'s tree at tree_size' }) merkle_root: string;
  @ApiProperty() tree_size: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ description: 'C2SP signed note: the tlog-checkpoint body, the log signature and every witness cosignature' }) checkpoint: string;
  @ApiProperty({ type: [WitnessReceiptDto] }) witness_receipts: WitnessReceiptDto[];
}

export class InclusionProofDto {
  @ApiProperty() entry_id: string;
  @ApiProperty() leaf_index: number;
  @ApiProperty() tree_size: number;
  @ApiProperty({ type: [String], description: 'Lower-case hex hashes, RFC 9162 section 2.1.3 order' }) proof: string[];
}

export class ConsistencyProofDto {
  @ApiProperty() from_size: number;
  @ApiProperty() to_size: number;
  @ApiProperty() from_root: string;
  @ApiProperty() to_root: string;
  @ApiProperty({ type: [String], description: 'Lower-case hex hashes, RFC 9162 section 2.1.4 order' }) proof: string[];
}

export class AuditExportDto {
  @ApiProperty() application_id: string;
  @ApiProperty() country: string;
  @ApiProperty({ description: 'The hashing rule of the entries, in words' }) hash_rule: string;
  @ApiProperty({ description: 'How entries become leaves of the country\'s Merkle tree, in words' }) leaf_rule: string;
  @ApiProperty({ type: [AuditEntryDto] }) entries: AuditEntryDto[];
  @ApiProperty({ type: AnchorDto, nullable: true }) anchor: AnchorDto | null;
  @ApiProperty({ type: [InclusionProofDto], description: 'An inclusion proof against anchor for every entry it covers' }) inclusion_proofs: InclusionProofDto[];
}
