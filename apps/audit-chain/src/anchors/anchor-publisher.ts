import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import {
  AUDIT_WITNESS_ADD_CHECKPOINT,
  AUDIT_WITNESS_CONFIGURATION,
  AuditAnchorMessage,
  WitnessAddCheckpointReply,
  WitnessConfigurationMessage,
} from '@dcr/contracts';
import { newOpaqueId } from '@dcr/domain';
import { ServiceClients } from '@dcr/service-kit';
import {
  consistencyProof,
  formatAddCheckpointRequest,
  formatCheckpoint,
  parseCosignatureResponse,
  parseVerifierKey,
  signNote,
  treeRootFromNodes,
  verifyCosignature,
} from '@dcr/transparency';
import { firstValueFrom, timeout } from 'rxjs';
import { DataSource } from 'typeorm';
import { AuditKeys } from '../keys/audit-keys';
import { TrailRepository } from '../trail/trail.repository';
import { AnchorsRepository } from './anchors.repository';

/** A witness as the publisher reaches it: a peer country's audit-chain service, or a tlog-witness URL. */
interface WitnessTarget {
  label: string;
  verifierKey: () => Promise<string>;
  addCheckpoint: (body: string) => Promise<WitnessAddCheckpointReply>;
}

const WITNESS_TIMEOUT_MS = 10_000;

/**
 * Every ANCHOR_INTERVAL, signs a checkpoint of the country's tree (a C2SP signed note over origin,
 * size and root) and asks every witness to cosign it, sending each a consistency proof from the size
 * it last cosigned. A witness that is down or refuses does not stop the anchor; its receipt is
 * simply missing, and the next anchor tries again from where it stands.
 */
@Injectable()
export class AnchorPublisher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AnchorPublisher.name);
  private readonly peerWitnessKeys = new Map<string, string>();
  private running?: Promise<unknown>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly trail: TrailRepository,
    private readonly anchors: AnchorsRepository,
    private readonly keys: AuditKeys,
    private readonly clients: ServiceClients,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    const handle = setInterval(() => {
      if (!this.running) this.running = this.anchorNow().catch((error) => this.logger.warn(`anchor: ${(error as Error).message}`)).finally(() => (this.running = undefined));
    }, this.keys.anchorIntervalMs);
    handle.unref();
    this.scheduler.addInterval('audit-anchor', handle);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.running;
  }

  peerCountries(): string[] {
    return this.clients.peerCountries();
  }

  /** Signs a checkpoint of the tree as it is now (unless the newest anchor already covers it) and collects cosignatures. */
  async anchorNow(): Promise<AuditAnchorMessage | null> {
    const created = await this.dataSource.transaction(async (manager) => {
      await this.anchors.lockForAnchor(manager);
      const size = await this.trail.treeSize(manager);
      if (size === 0 || size === (await this.anchors.newestSize(manager))) return null;
      const root = await treeRootFromNodes(size, (ids) => this.trail.nodes(ids, manager));
      const note = signNote(formatCheckpoint({ origin: this.keys.origin, size, rootHash: root, extensions: [] }), [this.keys.checkpointSigner]);
      const id = newOpaqueId('anc', 20);
      await this.anchors.insert(manager, { id, treeSize: size, merkleRoot: root.toString('hex'), origin: this.keys.origin, checkpoint: note, createdAt: new Date() });
      return { id, size, note };
    });
    if (!created) return this.anchors.newest(this.keys.country);
    await Promise.all(this.witnesses().map((witness) => this.cosign(witness, created)));
    return this.anchors.byId(this.keys.country, created.id);
  }

  private witnesses(): WitnessTarget[] {
    const peers: WitnessTarget[] = this.clients.peerCountries().map((country) => ({
      label: `peer:${country}`,
      verifierKey: async () => {
        const known = this.peerWitnessKeys.get(country);
        if (known) return known;
        const config = await firstValueFrom(
          this.clients.peer(country).send<WitnessConfigurationMessage>(AUDIT_WITNESS_CONFIGURATION, {}).pipe(timeout(WITNESS_TIMEOUT_MS)),
        );
        const current = config.witness.cosignature_keys.find((key) => key.status === 'current');
        if (!current) throw new Error(`witness of ${country} publishes no current key`);
        this.peerWitnessKeys.set(country, current.verifier_key);
        return current.verifier_key;
      },
      addCheckpoint: (body) =>
        firstValueFrom(
          this.clients.peer(country).send<WitnessAddCheckpointReply>(AUDIT_WITNESS_ADD_CHECKPOINT, { body }).pipe(timeout(WITNESS_TIMEOUT_MS)),
        ),
    }));
    const external: WitnessTarget[] = this.keys.externalWitnesses.map(({ url, verifierKey }) => ({
      label: url,
      verifierKey: async () => verifierKey,
      addCheckpoint: async (body) => {
        const response = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'text/plain; charset=utf-8' }, signal: AbortSignal.timeout(WITNESS_TIMEOUT_MS) });
        return { status: response.status as WitnessAddCheckpointReply['status'], content_type: response.headers.get('content-type') ?? '', body: await response.text() };
      },
    }));
    return [...peers, ...external];
  }

  /** One witness, one checkpoint: at most two tries (the second after the witness told us its size). */
  private async cosign(witness: WitnessTarget, anchor: { id: string; size: number; note: string }): Promise<void> {
    try {
      const verifier = parseVerifierKey(await witness.verifierKey());
      let oldSize = Math.min(await this.anchors.witnessSize(verifier.name), anchor.size);
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const proof = oldSize > 0 && oldSize < anchor.size ? await consistencyProof(oldSize, anchor.size, (ids) => this.trail.nodes(ids)) : [];
        const reply = await witness.addCheckpoint(formatAddCheckpointRequest({ oldSize, consistencyProof: proof, checkpointNote: anchor.note }));
        if (reply.status === 409 && /^\d+\s*$/.test(reply.body) && attempt === 0) {
          oldSize = Number(reply.body.trim());
          if (oldSize > anchor.size) throw new Error(`witness holds size ${oldSize}, beyond this checkpoint`);
          continue;
        }
        if (reply.status !== 200) throw new Error(`witness answered ${reply.status}: ${reply.body.slice(0, 200)}`);
        const body = anchor.note.slice(0, anchor.note.indexOf('\n\n') + 1);
        const signature = parseCosignatureResponse(reply.body).find((candidate) => candidate.keyId.equals(verifier.keyId));
        const checked = signature ? verifyCosignature(verifier, body, signature) : null;
        if (!signature || !checked) throw new Error('witness answered without a valid cosignature from its published key');
        await this.anchors.addReceipt(anchor.id, {
          witness: verifier.name,
          signature: Buffer.concat([signature.keyId, signature.signature]).toString('base64'),
          cosignature: signature.line.replace(/\n$/, ''),
          signedAt: new Date(checked.timestamp * 1000),
        });
        await this.anchors.setWitnessSize(verifier.name, anchor.size);
        return;
      }
    } catch (error) {
      this.logger.warn(`witness ${witness.label} did not cosign ${anchor.id}: ${(error as Error).message}`);
    }
  }
}
