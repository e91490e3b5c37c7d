import { FlowTerms } from './flow-terms';

/**
 * The part of a flow version a participant sees: what the decision pages render. The decisions
 * service puts it in a session's view; the gateway's preview page builds it from a flow version.
 */
export function participantFlow(flow: { id: string; version: number }, terms: FlowTerms) {
  return {
    id: flow.id,
    version: flow.version,
    pattern: terms.pattern,
    name: terms.name,
    title: terms.title,
    description: terms.description,
    policy_url: terms.policy_url,
    locale: terms.locale,
    consent_duration: terms.consent_duration,
    retention: terms.retention,
    revocation_policy: terms.revocation_policy,
    data_fields: terms.data_fields,
    steps: terms.steps,
    purposes: terms.purposes,
  };
}
