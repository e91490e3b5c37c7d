import { Injectable, Logger } from '@nestjs/common';
import { AUDIT_WITNESS_CONFIGURATION, WitnessAddCheckpointReply, WitnessConfigurationMessage } from '@dcr/contracts';
import { ServiceClients } from '@dcr/service-kit';
import {
  formatCosignatureResponse,
  NoteError,
  openNote,
  parseAddCheckpointRequest,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  verifyConsistency,
} from '@dcr/transparency';
import { firstValueFrom, timeout } from 'rxjs';
import { DataSource } from 'typeorm';
import { AuditKeys } from '../keys/audit-keys';

const TEXT = 'text/plain; charset=utf-8';
const reply = (status: WitnessAddCheckpointReply['status'], body: string, contentType = TEXT): WitnessAddCheckpointReply => ({ status, content_type: contentType, body });

/**
 * This country's witness (C2SP tlog-witness `add-checkpoint`) for the other countries' logs. It knows
 * a log by its origin and pins the log's checkpoint key the first time a peer country publishes it.
 * For each log it keeps the latest checkpoint it cosigned and stores a new one before answering, so a
 * checkpoint that rolls back (an old size) or forks (same size, other root, or no valid consistency
 * proof) is refused, even after a restart.
 */
@Injectable()
export class CheckpointWitness {
  private readonly logger = new Logger(CheckpointWitness.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly keys: AuditKeys,
    private readonly clients: ServiceClients,
  ) {}

  async addCheckpoint(body: string): Promise<WitnessAddCheckpointReply> {
    let request;
    let checkpoint;
    try {
      request = parseAddCheckpointRequest(body);
      checkpoint = parseCheckpoint(parseNote(request.checkpointNote).text);
    } catch (error) {
      return reply(400, `malformed add-checkpoint request: ${(error as Error).message}\n`);
    }
    if (request.oldSize > checkpoint.size) return reply(400, 'old size is larger than the checkpoint size\n');

    const logKey = await this.logKeyFor(checkpoint.origin);
    if (!logKey) return reply(404, `unknown log origin ${checkpoint.origin}\n`);
    try {
      openNote(request.checkpointNote, [parseVerifierKey(logKey)]);
    } catch (error) {
      if (error instanceof NoteError) return reply(403, 'the checkpoint is not signed by the log key this witness knows\n');
      throw error;
    }

    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`audit_chain.witnessed:${checkpoint.origin}`]);
      const [state] = await manager.query(`SELECT "tree_size", "root_hash" FROM "audit_chain"."witnessed_logs" WHERE "origin" = $1`, [checkpoint.origin]);
      const knownSize = state ? Number(state.tree_size) : 0;
      if (request.oldSize !== knownSize) return reply(409, `${knownSize}\n`, 'text/x.tlog.size');
      if (state) {
        const knownRoot = Buffer.from(state.root_hash as string, 'hex');
        if (!verifyConsistency(knownSize, checkpoint.size, request.consistencyProof, knownRoot, checkpoint.rootHash)) {
          return reply(422, 'the consistency proof does not prove this checkpoint extends the one last cosigned\n');
        }
      }
      await manager.query(
        `INSERT INTO "audit_chain"."witnessed_logs" ("origin", "verifier_key", "tree_size", "root_hash", "checkpoint", "updated_at")
         VALUES ($1, $2, $3, $4, $5, now())
         ON CONFLICT ("origin") DO UPDATE SET "tree_size" = EXCLUDED."tree_size", "root_hash" = EXCLUDED."root_hash",
           "checkpoint" = EXCLUDED."checkpoint", "updated_at" = now()`,
        [checkpoint.origin, logKey, checkpoint.size, checkpoint.rootHash.toString('hex'), request.checkpointNote],
      );
      const signature = this.keys.cosigner.cosign(parseNote(request.checkpointNote).text, Math.floor(Date.now() / 1000));
      return reply(200, formatCosignatureResponse([signature]));
    });
  }

  /** The pinned key of a log, or the key a peer country publishes for that origin (then pinned). */
  private async logKeyFor(origin: string): Promise<string | null> {
    const [pinned] = await this.dataSource.query(`SELECT "verifier_key" FROM "audit_chain"."witnessed_logs" WHERE "origin" = $1`, [origin]);
    if (pinned) return pinned.verifier_key as string;
    for (const country of this.clients.peerCountries()) {
      try {
        const config = await firstValueFrom(
          this.clients.peer(country).send<WitnessConfigurationMessage>(AUDIT_WITNESS_CONFIGURATION, {}).pipe(timeout(5000)),
        );
        if (config.log.origin !== origin) continue;
        return config.log.checkpoint_keys.find((key) => key.status === 'current')?.verifier_key ?? null;
      } catch (error) {
        this.logger.warn(`witness configuration of ${country} unavailable: ${(error as Error).message}`);
      }
    }
    return null;
  }
}
