import { Injectable } from '@nestjs/common';
import { CaptureClaimReply, CaptureClaimRequest, CaptureSettleReply, CaptureSettleRequest, HeldCaptureMessage } from '@dcr/contracts';
import { DataSource } from 'typeorm';
import { Capture } from './capture.entity';

/** Which capture: by id (this country's own commit) or by token hash within an application (a peer's). */
type CaptureKey = { id: string } | { tokenHash: string; applicationId: string };

const whereOf = (key: CaptureKey) =>
  'id' in key
    ? { sql: '"id" = :id', parameters: { id: key.id } }
    : { sql: '"token_hash" = :tokenHash AND "application_id" = :applicationId', parameters: { tokenHash: key.tokenHash, applicationId: key.applicationId } };

/**
 * A capture is committed in one country: the one holding it, or the person's home country when that
 * is another (it asks the holder, CAPTURES_CLAIM). Committing claims the capture for a country
 * first, in one statement, so two countries cannot both commit it; every commit under way counts
 * itself (`commit_attempts`), and the last one to fail without a record releases the claim, so a
 * commit refused for a person homed elsewhere (421) leaves the capture to their home country.
 */
@Injectable()
export class CaptureClaims {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Claims the capture for `country`; false when another country has it (or, from a peer, when it
   * expired uncommitted). A capture committed before claims existed has a record and no claim: only
   * this country may claim it.
   */
  async claim(key: CaptureKey, country: string, from: 'here' | 'peer'): Promise<boolean> {
    const where = whereOf(key);
    const open = from === 'here' ? '"committed_in" IS NULL' : '("committed_in" IS NULL AND "record_id" IS NULL AND "expires_at" > now())';
    const result = await this.dataSource
      .createQueryBuilder()
      .update(Capture)
      .set({ committedIn: country, commitAttempts: () => '"commit_attempts" + 1' })
      .where(`${where.sql} AND (${open} OR "committed_in" = :country)`, { ...where.parameters, country })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** Who has the capture now (null: nobody), when a claim was refused. */
  async committedIn(id: string): Promise<string | null> {
    const capture = await this.dataSource.manager.findOne(Capture, { where: { id }, select: { id: true, committedIn: true } });
    return capture?.committedIn ?? null;
  }

  /**
   * Ends one commit under way for `country`: with the record it made (kept), or without one; the
   * last commit under way that made none releases the claim when `release` (it wrote nothing, so
   * the capture is free again). Answers whether `country` held the claim.
   */
  async settle(key: CaptureKey, country: string, outcome: { recordId: string } | { release: boolean }): Promise<boolean> {
    const where = whereOf(key);
    const recordId = 'recordId' in outcome ? outcome.recordId : null;
    const release = 'release' in outcome && outcome.release;
    const result = await this.dataSource
      .createQueryBuilder()
      .update(Capture)
      .set({
        recordId: () => 'COALESCE("record_id", CAST(:recordId AS text))',
        commitAttempts: () => 'GREATEST("commit_attempts" - 1, 0)',
        committedIn: () => `CASE WHEN CAST(:release AS boolean) AND "record_id" IS NULL AND "commit_attempts" <= 1 THEN NULL ELSE "committed_in" END`,
      })
      .where(`${where.sql} AND "committed_in" = :country`, { ...where.parameters, country, recordId, release })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** A peer country, the person's home, claims a capture held here (CAPTURES_CLAIM). */
  async claimForPeer(request: CaptureClaimRequest): Promise<CaptureClaimReply> {
    const key = { tokenHash: request.capture_token_hash, applicationId: request.application_id };
    const claimed = await this.claim(key, request.claimant_country, 'peer');
    const capture = await this.dataSource.manager.findOne(Capture, { where: { tokenHash: key.tokenHash, applicationId: key.applicationId } });
    if (!capture) return { outcome: 'not_found' };
    if (claimed) return { outcome: 'claimed', capture: heldCapture(capture) };
    if (capture.recordId) return { outcome: 'committed' };
    // No record yet: expired, or another commit holds the claim (this country's own, which may
    // still fail for a person homed elsewhere) or has just released it. The claimant tries again.
    return { outcome: !capture.committedIn && capture.expiresAt.getTime() <= Date.now() ? 'expired' : 'busy' };
  }

  /** The peer that claimed a capture says what its commit made (CAPTURES_SETTLE). */
  async settleForPeer(request: CaptureSettleRequest): Promise<CaptureSettleReply> {
    const key = { tokenHash: request.capture_token_hash, applicationId: request.application_id };
    const outcome = request.record_id ? { recordId: request.record_id } : { release: request.release };
    return { settled: await this.settle(key, request.claimant_country, outcome) };
  }
}

/** What a capture holds, as a commit takes it (also across the border: nothing of the person, whom it never holds). */
export function heldCapture(capture: Capture): HeldCaptureMessage {
  return {
    capture_id: capture.id,
    flow_id: capture.flowId,
    flow_version: capture.flowVersion,
    channel: capture.channel as HeldCaptureMessage['channel'],
    decisions: capture.decisions,
    wording_verdict: capture.wordingVerdict,
    origin: capture.origin,
    rendering_evidence: capture.renderingEvidence,
    captured_at: capture.createdAt.toISOString(),
  };
}
