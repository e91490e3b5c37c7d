/** Terms shared by the decision tests: two consent purposes, a legitimate interest, a notice-only one. */
export const NEWSLETTER_FLOW = {
  name: 'Newsletter',
  pattern: 'standard',
  purposes: ['newsletter', 'analytics', 'fraud', 'billing'],
  purpose_definitions: {
    newsletter: { label: 'Newsletter', basis: 'consent' },
    analytics: { label: 'Usage analytics', basis: 'consent' },
    fraud: { label: 'Fraud prevention', basis: 'legitimate_interest' },
    billing: { label: 'Billing', basis: 'contract' },
  },
  consent_duration: 'P1Y',
  policy_url: 'https://example.com/privacy',
};
