import type { FlowPattern } from '@dcr/domain';
import type { CollectionChannel } from '../schema';

const MECHANISM_TEXT: Record<FlowPattern, string> = {
  standard: 'Standard consent flow',
  informed: 'Informed consent flow (disclosures presented before the decision)',
};

const CHANNEL_TEXT: Record<CollectionChannel, string> = {
  hosted: 'decided on a decision page hosted by the service',
  embedded: "decided on the service's decision page embedded in the organisation's site",
  embedded_field: "decided in the service's consent field inside the organisation's form, committed by the organisation's server",
  embedded_field_browser: "decided in the service's consent field inside the organisation's form, committed by the browser",
  form_capture: "decided in the organisation's own form control, committed by the organisation's server",
  form_capture_browser: "decided in the organisation's own form control, committed by the browser",
  form_platform_webhook: "decided in a hosted form builder, delivered by the builder's signed webhook",
  controller_attested: "attested by the organisation's server",
  imported: "imported from the organisation's historical records, with the original capture time",
};

/**
 * `pii_processing.collection_method`: the human-readable form of `extensions.collection_mechanism`
 * (the flow's pattern), completed by how the decision reached the service.
 */
export function collectionMethodText(mechanism: FlowPattern, channel: CollectionChannel): string {
  return `${MECHANISM_TEXT[mechanism]}, ${CHANNEL_TEXT[channel]}.`;
}
