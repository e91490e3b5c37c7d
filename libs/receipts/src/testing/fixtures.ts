import { FlowTerms, normaliseFlowTerms } from '@dcr/domain';
import type { FrozenReceiptInput } from '../builder';

/*
 * Realistic receipt-builder inputs for tests: one consent flow with a consent purpose, a
 * legitimate-interest purpose and a notice-only purpose, decided on the hosted page by an identified
 * person, anonymously, and imported from an organisation's historical records.
 */

export const SCHEMA_URL_BASE = 'http://127.0.0.1:3000';
export const APPLICATION_ID = 'tp_dev_0123456789abcdef';
export const FLOW_ID = 'flw_dev_fedcba9876543210';

/** `POST /api/v1/applications/<app>/flows` body of the newsletter flow. */
export const NEWSLETTER_FLOW_BODY = {
  name: 'Newsletter sign-up',
  pattern: 'standard',
  purposes: ['marketing_email', 'product_analytics', 'terms_of_service'],
  purpose_definitions: {
    marketing_email: {
      label: 'Send me the monthly newsletter',
      description: 'One e-mail a month about new features and offers. Unsubscribe at any time.',
      basis: 'consent',
      mechanism: 'explicit',
    },
    product_analytics: {
      label: 'Measure how the newsletter is read',
      description: 'Open and click counts, kept for 13 months.',
      basis: 'legitimate_interest',
    },
    terms_of_service: {
      label: 'Terms of service',
      basis: 'contract',
      required: true,
    },
  },
  locale: 'en-GB',
  title: 'Stay in touch with Acme',
  description: 'Choose what Acme may do with your e-mail address.',
  policy_url: 'https://acme.example/privacy',
  jurisdiction: 'EU',
  consent_duration: 'P1Y',
} as const;

export function newsletterTerms(): FlowTerms {
  return normaliseFlowTerms(JSON.parse(JSON.stringify(NEWSLETTER_FLOW_BODY)));
}

export const PLATFORM_PROCESSOR = {
  id: 'decision-service',
  name: 'Decision Service Ltd',
  url: 'https://decision-service.dev',
  email: 'privacy@decision-service.dev',
};

export const SUPERVISORY_AUTHORITY = {
  id: 'de-bfdi',
  name: 'Der Bundesbeauftragte für den Datenschutz und die Informationsfreiheit',
  url: 'https://www.bfdi.bund.de',
};

/** An identified person deciding on the hosted page: marketing granted, analytics not objected. */
export function hostedConsentInput(): FrozenReceiptInput {
  return {
    recordId: 'rec_01hv3k9m2q8x7c4n5b6z',
    flow: { id: FLOW_ID, terms: newsletterTerms() },
    subject: { id: 'sub_a1b2c3d4e5f6g7h8i9j0' },
    decision: {
      outcome: 'granted',
      purposeStatuses: { marketing_email: 'granted', product_analytics: 'noticed', terms_of_service: 'noticed' },
      locale: 'en-GB',
      channel: 'hosted',
      deliveryMode: 'redirect',
      requestedAt: '2025-03-01T09:58:00Z',
      noticeShownAt: '2025-03-01T09:58:03.120Z',
      decidedAt: '2025-03-01T10:00:00Z',
      recordedAt: '2025-03-01T10:00:00.250Z',
    },
    application: {
      id: APPLICATION_ID,
      name: 'Acme Newsletter',
      declared: {
        legalName: 'Acme Publishing GmbH',
        partyType: 'organization',
        address: 'Friedrichstraße 1, 10117 Berlin, Germany',
        email: 'privacy@acme.example',
        phone: '+49 30 1234567',
        url: 'https://acme.example/contact',
      },
      recipients: [{ id: 'mailer-co', name: 'Mailer Co. Ltd', partyType: 'organization', url: 'https://mailer.example' }],
    },
    storageCountry: 'DE',
    processor: PLATFORM_PROCESSOR,
    supervisoryAuthority: SUPERVISORY_AUTHORITY,
    withdrawalUrl: `${SCHEMA_URL_BASE}/receipts/rec_01hv3k9m2q8x7c4n5b6z/withdraw`,
    privacyRights: { access: `${SCHEMA_URL_BASE}/me/records`, export: `${SCHEMA_URL_BASE}/me/records/export` },
    legitimateInterestAssessments: ['lia_newsletter_analytics_2025'],
  };
}

/** The same flow finished without an established identity, in the consent field inside the form. */
export function anonymousFieldInput(): FrozenReceiptInput {
  return {
    recordId: 'rec_01hv3kanon0000000001',
    flow: { id: FLOW_ID, terms: newsletterTerms() },
    subject: { anonymous: true },
    decision: {
      outcome: 'granted',
      purposeStatuses: { marketing_email: 'granted', product_analytics: 'objected', terms_of_service: 'noticed' },
      channel: 'embedded_field_browser',
      decidedAt: '2025-03-02T08:15:30Z',
      recordedAt: '2025-03-02T08:15:30Z',
    },
    application: { id: APPLICATION_ID, name: 'Acme Newsletter' },
    storageCountry: 'US',
    processor: PLATFORM_PROCESSOR,
    evidence: {
      wordingVerdict: { marketing_email: 'match', product_analytics: 'drift' },
      renderingEvidence: [
        {
          renderer: 'service-consent-field/1',
          notice_version: 'notice:flw_dev_fedcba9876543210:0000000000000000',
          rendered_at: '2025-03-02T08:14:02Z',
          host_origin: 'https://acme.example',
          trusted_gesture: true,
          visible_at_submit: true,
          visibility_measurement: 'intersection_observer',
        },
      ],
    },
  };
}

/** A record imported from the organisation's history: captured in 2023, recorded in 2025. */
export function importedRecordInput(): FrozenReceiptInput {
  return {
    recordId: 'rec_01hv3kimport00000042',
    flow: { id: FLOW_ID, terms: newsletterTerms() },
    subject: { id: 'sub_k1l2m3n4o5p6q7r8s9t0' },
    decision: {
      outcome: 'granted',
      purposeStatuses: { marketing_email: 'granted', product_analytics: 'noticed', terms_of_service: 'noticed' },
      channel: 'imported',
      decidedAt: '2023-06-15T12:00:00Z',
      recordedAt: '2025-03-03T16:20:00Z',
    },
    application: { id: APPLICATION_ID, name: 'Acme Newsletter', recipients: [] },
    storageCountry: 'DE',
    processor: PLATFORM_PROCESSOR,
  };
}
