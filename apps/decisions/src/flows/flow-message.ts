import { FlowMessage, FlowVersionSnapshot } from '@dcr/contracts';
import { FlowTerms, isCapturable } from '@dcr/domain';
import { FlowVersion } from './flow-version.entity';

export function toFlowMessage(row: FlowVersion): FlowMessage {
  const capturable = isCapturable(row.terms as unknown as FlowTerms);
  return {
    id: row.id,
    application_id: row.applicationId,
    version: row.version,
    status: row.status,
    terms: row.terms,
    terms_fingerprint: row.termsFingerprint,
    capturable: capturable.capturable,
    capturable_reasons: capturable.reasons,
    authored_in: row.authoredIn,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    activated_at: row.activatedAt?.toISOString() ?? null,
    superseded_at: row.supersededAt?.toISOString() ?? null,
  };
}

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

/**
 * Normalised terms back in the shape of the create body (`purposes` as keys, definitions beside
 * them), so a change can be merged onto them and validated again as a whole.
 */
export function termsAsInput(terms: FlowTerms): Record<string, unknown> {
  const { purposes, ...rest } = terms;
  return {
    ...rest,
    purposes: purposes.map((purpose) => purpose.key),
    purpose_definitions: Object.fromEntries(
      purposes.map((purpose) => [
        purpose.key,
        { label: purpose.label, description: purpose.description, basis: purpose.basis, mechanism: purpose.mechanism, required: purpose.required },
      ]),
    ),
  };
}
