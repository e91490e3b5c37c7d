import { FlowMessage, FlowVersionSnapshot } from '@dcr/contracts';
import { FlowTerms, isCapturable, noticeFingerprint } from '@dcr/domain';
import { FlowVersion } from './flow-version.entity';

export function toSnapshot(row: FlowVersion): FlowVersionSnapshot {
  return {
    id: row.id,
    application_id: row.applicationId,
    version: row.version,
    status: row.status,
    terms: row.terms,
    terms_fingerprint: row.termsFingerprint,
    authored_in: row.authoredIn,
    revision: row.revision,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    activated_at: row.activatedAt?.toISOString() ?? null,
    superseded_at: row.supersededAt?.toISOString() ?? null,
  };
}

export function fromSnapshot(snapshot: FlowVersionSnapshot): FlowVersion {
  return Object.assign(new FlowVersion(), {
    id: snapshot.id,
    version: snapshot.version,
    applicationId: snapshot.application_id,
    status: snapshot.status,
    terms: snapshot.terms,
    termsFingerprint: snapshot.terms_fingerprint,
    authoredIn: snapshot.authored_in,
    revision: snapshot.revision,
    createdAt: new Date(snapshot.created_at),
    updatedAt: new Date(snapshot.updated_at),
    activatedAt: snapshot.activated_at ? new Date(snapshot.activated_at) : null,
    supersededAt: snapshot.superseded_at ? new Date(snapshot.superseded_at) : null,
  });
}

export function toFlowMessage(row: FlowVersion): FlowMessage {
  const { revision: _revision, ...version } = toSnapshot(row);
  const capturable = isCapturable(row.terms as unknown as FlowTerms);
  return { ...version, notice_digest: noticeDigestOf(row), capturable: capturable.capturable, capturable_reasons: capturable.reasons };
}

const noticeDigests = new WeakMap<object, string>();

/**
 * The fingerprint of a flow version's notice (noticeFingerprint: the receipts' privacy_notice.hash),
 * worked out once per terms object (a version's terms never change once stored).
 */
export function noticeDigestOf(row: FlowVersion): string {
  let digest = noticeDigests.get(row.terms);
  if (digest === undefined) noticeDigests.set(row.terms, (digest = noticeFingerprint(row.terms as unknown as FlowTerms)));
  return digest;
}
