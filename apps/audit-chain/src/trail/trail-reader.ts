import { Injectable } from '@nestjs/common';
import {
  AuditConsistencyMessage,
  AuditConsistencyRequest,
  AuditExportReply,
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

  async export(applicationId: string): Promise<AuditExportReply> {
    const chain = await this.trail.chain(applicationId);
    const anchor = await this.anchors.newest(this.keys.country);
    const inclusion: AuditInclusionMessage[] = [];
    if (anchor) {
      for (const entry of chain) {
        if (entry.leaf_index >= anchor.tree_size) continue;
        const proof = await inclusionProof(entry.leaf_index, anchor.tree_size, (ids) => this.trail.nodes(ids));
        inclusion.push({ entry_id: entry.entry_id, leaf_index: entry.leaf_index, tree_size: anchor.tree_size, proof: hex(proof) });
      }
    }
    return {
      application_id: applicationId,
      country: this.keys.country,
      hash_rule: AUDIT_HASH_RULE,
      leaf_rule: AUDIT_LEAF_RULE,
      entries: chain.map(({ leaf_index: _leaf, ...entry }) => entry),
      anchor,
      inclusion_proofs: inclusion,
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
