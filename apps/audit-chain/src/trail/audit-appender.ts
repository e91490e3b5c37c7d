import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { AuditAppendReply, AuditAppendRequest } from '@dcr/contracts';
import { auditLeafData, auditPayloadDigest, newOpaqueId, sealAuditEntry } from '@dcr/domain';
import { CompactRange, leafHash, NodeId } from '@dcr/transparency';
import { DataSource } from 'typeorm';
import { StoredEntry, TrailRepository } from './trail.repository';

interface PendingAppend {
  request: AuditAppendRequest;
  resolve: (reply: AuditAppendReply) => void;
  reject: (error: unknown) => void;
}

/** At most this many events share one transaction. */
const MAX_BATCH = 1000;

/**
 * The country's sequencer. Append requests that arrive while a batch is being written wait and are
 * written together in the next one, so the trail takes one transaction per batch, not per event:
 * under an advisory lock it skips events already on the trail (a producer's redelivery), chains each
 * new entry to its application's head, extends the Merkle tree, and answers every caller only after
 * the commit.
 */
@Injectable()
export class AuditAppender implements OnApplicationShutdown {
  private readonly logger = new Logger(AuditAppender.name);
  private queue: PendingAppend[] = [];
  private running?: Promise<void>;
  /** The tree's right edge after this process's last commit; reused when no other replica appended since. */
  private tree?: CompactRange;

  constructor(
    private readonly dataSource: DataSource,
    private readonly trail: TrailRepository,
  ) {}

  append(request: AuditAppendRequest): Promise<AuditAppendReply> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.startDrain();
    });
  }

  /**
   * Starts draining unless a drain runs. A caller answered by the last batch can append again before
   * that drain's promise settles (its answer comes first): the append then waits in the queue, and the
   * drain that ends starts the next one for it.
   */
  private startDrain(): void {
    if (this.running) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.queue.length > 0) this.startDrain();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch: PendingAppend[] = [];
      let events = 0;
      while (this.queue.length > 0 && (batch.length === 0 || events + this.queue[0].request.events.length <= MAX_BATCH)) {
        const next = this.queue.shift()!;
        batch.push(next);
        events += next.request.events.length;
      }
      try {
        const replies = await this.write(batch.map((pending) => pending.request));
        batch.forEach((pending, i) => pending.resolve(replies[i]));
      } catch (error) {
        this.tree = undefined;
        this.logger.warn(`audit append of ${events} events failed: ${(error as Error).message}`);
        for (const pending of batch) pending.reject(error);
      }
    }
  }

  private write(requests: AuditAppendRequest[]): Promise<AuditAppendReply[]> {
    return this.dataSource.transaction(async (manager) => {
      await this.trail.lockForAppend(manager);
      const keyed = requests.flatMap((request) => request.events.map((event) => ({ source: request.source, event })));
      const applications = [...new Set(keyed.map(({ event }) => event.application_id))];
      const { known, size, heads } = await this.trail.appendState(
        manager,
        keyed.map(({ source, event }) => ({ source, id: event.id })),
        applications,
      );
      const tree = this.tree?.size === size ? this.tree : new CompactRange(size, await this.trail.nodes(CompactRange.edgeIds(size), manager));

      const stored: StoredEntry[] = [];
      const nodes: Array<NodeId & { hash: Buffer }> = [];
      const placed = new Map<string, { entry_id: string; leaf_index: number; fresh: boolean }>();
      for (const { source, event } of keyed) {
        const key = `${source}\u0000${event.id}`;
        if (placed.has(key)) continue;
        const existing = known.get(key);
        if (existing) {
          placed.set(key, { ...existing, fresh: false });
          continue;
        }
        const entry = sealAuditEntry(
          {
            entry_id: newOpaqueId('aud', 20),
            event_type: event.type,
            actor: event.actor,
            occurred_at: new Date(event.occurred_at).toISOString(),
            payload_digest: auditPayloadDigest(event.payload),
          },
          heads.get(event.application_id) ?? null,
        );
        heads.set(event.application_id, { seq: entry.seq, hash: entry.hash });
        const leafIndex = tree.size;
        nodes.push(...tree.append(leafHash(auditLeafData(entry.hash))));
        stored.push({ ...entry, leaf_index: leafIndex, source, source_event_id: event.id, application_id: event.application_id, payload: event.payload });
        placed.set(key, { entry_id: entry.entry_id, leaf_index: leafIndex, fresh: true });
      }
      if (stored.length > 0) await this.trail.insertBatch(manager, stored, nodes, new Date());
      this.tree = tree;

      const counted = new Set<string>();
      return requests.map((request) => {
        let appended = 0;
        const entries = request.events.map((event) => {
          const key = `${request.source}\u0000${event.id}`;
          const at = placed.get(key)!;
          if (at.fresh && !counted.has(key)) {
            counted.add(key);
            appended += 1;
          }
          return { event_id: event.id, entry_id: at.entry_id, leaf_index: at.leaf_index };
        });
        return { appended, entries };
      });
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.running;
  }
}
