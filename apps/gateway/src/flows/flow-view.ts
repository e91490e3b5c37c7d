import { FlowMessage } from '@dcr/contracts';
import { FlowTerms } from '@dcr/domain';

/** A flow version as the API shows it: the terms in the shape they were written, plus its state. */
export function flowView(flow: FlowMessage, baseUrl: string): Record<string, unknown> {
  const terms = flow.terms as unknown as FlowTerms;
  const { purposes, ...rest } = terms;
  return {
    id: flow.id,
    application_id: flow.application_id,
    version: flow.version,
    status: flow.status,
    ...rest,
    purposes: purposes.map((purpose) => purpose.key),
    purpose_definitions: Object.fromEntries(purposes.map(({ key, ...definition }) => [key, definition])),
    capturable: flow.capturable,
    capturable_reasons: flow.capturable_reasons,
    terms_fingerprint: flow.terms_fingerprint,
    notice_digest: flow.notice_digest,
    hosted_url: `${baseUrl}/accord/${flow.id}`,
    created_at: flow.created_at,
    updated_at: flow.updated_at,
    activated_at: flow.activated_at,
    superseded_at: flow.superseded_at,
  };
}
