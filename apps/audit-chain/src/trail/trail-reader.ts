import { Injectable } from '@nestjs/common';
import {
  AuditConsistencyMessage,
  AuditConsistencyRequest,
  AuditEntryMessage,
  AuditExportPart,
  AuditExportRequest,
  AuditInclusionMessage,
  AuditInclusionRequest,
  AuditListReply,
  AuditListRequest,
} from '@dcr/contracts';
import { AUDIT_HASH_RULE, AUDIT_LEAF_RULE, DomainError, notFound } from '@dcr/domain';
import { consistencyProof, inclusionProof, treeRootFromNodes } from '@dcr/transparency';
import { AnchorsRepository } from '../anchors/anchors.repository';
import { AuditKeys } from '../keys/audit-keys';
import { TrailRepository } from './trail.repository';

/** Bytes of entries and proofs in one part of an export: well within NATS's default 1 MiB message. */
const EXPORT_PART_BYTES = 512 * 1024;
/** Entries read for one part at most (a part is cut by bytes; about 1,300 entries fit). */
const EXPORT_PART_ENTRIES = 2000;

const hex = (hashes: readonly Buffer[]) => hashes.map((hash) => hash.toString('hex'));

/** Reads of the trail: pages, the export with its proofs, and inclusion and consistency proofs. */
@Injectable()
export class TrailReader {
  constructor(
    private readonly trail: TrailRepository,
    private readonly anchors: AnchorsRepository,
    private readonly keys: AuditKeys,
  ) {}

  async list(request: AuditListRequest): Promise<AuditListReply> {
    const rows = await this.trail.list({
      applicationId: request.application_id,
      types: request.types,
      from: request.from,
      to: request.to,
      afterSeq: request.after_seq,
      limit: request.limit + 1,
    });
    return { entries: rows.slice(0, request.limit), has_more: rows.length > request.limit };
  }

  /**
   * A part of the application's export: its entries after `after_seq` (from the first), as many as
   * fit EXPORT_PART_BYTES with their inclusion proofs, and `next_after_seq` while any are left. The
   * first part answers the newest anchor; the later ones prove against the tree size it had
   * (`tree_size`) and answer none, so the parts put together are one export against one anchor.
   */
  async export(request: AuditExportRequest): Promise<AuditExportPart> {
    const first = request.after_seq === undefined;
    const anchor = first ? await this.anchors.newest(this.keys.country) : null;
    const treeSize = first ? (anchor?.tree_size ?? 0) : (request.tree_size ?? 0);
    const chain = await this.trail.chainAfter(request.application_id, request.after_seq ?? 0, EXPORT_PART_ENTRIES + 1);
    const entries: AuditEntryMessage[] = [];
    const inclusion: AuditInclusionMessage[] = [];
    let bytes = 0;
    for (const { leaf_index: leafIndex, ...entry } of chain.slice(0, EXPORT_PART_ENTRIES)) {
      const proof = leafIndex < treeSize ? { entry_id: entry.entry_id, leaf_index: leafIndex, tree_size: treeSize, proof: hex(await inclusionProof(leafIndex, treeSize, (ids) => this.trail.nodes(ids))) } : undefined;
      const size = Buffer.byteLength(JSON.stringify(entry)) + (proof ? Buffer.byteLength(JSON.stringify(proof)) : 0);
      if (entries.length > 0 && bytes + size > EXPORT_PART_BYTES) break;
      entries.push(entry);
      if (proof) inclusion.push(proof);
      bytes += size;
    }
    const more = entries.length < chain.length;
    return {
      application_id: request.application_id,
      country: this.keys.country,
      hash_rule: AUDIT_HASH_RULE,
      leaf_rule: AUDIT_LEAF_RULE,
      entries,
      anchor,
      inclusion_proofs: inclusion,
      ...(more ? { next_after_seq: entries[entries.length - 1].seq } : {}),
    };
  }

  async inclusion(request: AuditInclusionRequest): Promise<AuditInclusionMessage> {
    const leafIndex = await this.trail.leafOf(request.application_id, request.entry_id);
    if (leafIndex === null) throw notFound('Audit entry');
    const treeSize = request.tree_size ?? (await this.anchors.newestSize());
    if (treeSize === 0) throw new DomainError('conflict', 'No anchor exists yet; ask again after the next anchor', [], { retry: true });
    if (treeSize > (await this.trail.treeSize())) {
      throw new DomainError('validation_failed', `tree_size ${treeSize} is larger than the tree`, [{ field: 'tree_size', reason: 'beyond the current tree size' }]);
    }
    if (leafIndex >= treeSize) {
      throw new DomainError('conflict', `The entry is not in a tree of size ${treeSize} yet (leaf index ${leafIndex}); ask again after the next anchor`);
    }
    const proof = await inclusionProof(leafIndex, treeSize, (ids) => this.trail.nodes(ids));
    return { entry_id: request.entry_id, leaf_index: leafIndex, tree_size: treeSize, proof: hex(proof) };
  }

  async consistency(request: AuditConsistencyRequest): Promise<AuditConsistencyMessage> {
    if (request.from_size > request.to_size) {
      throw new DomainError('validation_failed', 'from_size must not be larger than to_size', [{ field: 'from_size', reason: 'larger than to_size' }]);
    }
    if (request.to_size > (await this.trail.treeSize())) {
      throw new DomainError('validation_failed', `to_size ${request.to_size} is larger than the tree`, [{ field: 'to_size', reason: 'beyond the current tree size' }]);
    }
    const read = (ids: Parameters<TrailRepository['nodes']>[0]) => this.trail.nodes(ids);
    const [proof, fromRoot, toRoot] = await Promise.all([
      consistencyProof(request.from_size, request.to_size, read),
      treeRootFromNodes(request.from_size, read),
      treeRootFromNodes(request.to_size, read),
    ]);
    return { from_size: request.from_size, to_size: request.to_size, from_root: fromRoot.toString('hex'), to_root: toRoot.toString('hex'), proof: hex(proof) };
  }
}
