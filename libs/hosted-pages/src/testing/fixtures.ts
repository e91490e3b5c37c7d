import type { InboxItem, ParticipantView } from '../view';

/** Sample participant views for tests (not part of the build). */
export function consentView(overrides: Partial<ParticipantView> = {}): ParticipantView {
  return {
    session_token: 'dts_test_consent_1',
    kind: 'consent',
    status: 'reviewing',
    path: 'standard',
    delivery_mode: 'embed',
    embed_origin: 'http://localhost:4000',
    redirect_uri: null,
    deadline_at: '2025-03-01T12:05:00.000Z',
    expires_at: '2025-03-01T12:05:00.000Z',
    locale: 'en',
    now: '2025-03-01T12:00:00.000Z',
    application: { id: 'app_dev_1', name: 'Acme Shop' },
    allowed_transitions: [],
    signed_in: { email_hint: 'j***@example.com' },
    outcome: null,
    flow: {
      id: 'flw_dev_1',
      version: 1,
      pattern: 'standard',
      title: 'Share your contact details',
      name: 'newsletter',
      description: 'So that we can keep you up to date.',
      policy_url: 'https://acme.example/privacy',
      locale: 'en',
      consent_duration: 'P1Y',
      retention: 'P2Y6M',
      revocation_policy: null,
      data_fields: [
        { key: 'email', label: 'E-mail address', required: true },
        { key: 'phone', label: 'Phone number', required: false },
      ],
      steps: [],
      purposes: [
        { key: 'newsletter', label: 'Newsletter', description: 'A monthly e-mail.', basis: 'consent', mechanism: 'explicit', required: true, takes_decision: true },
        { key: 'marketing', label: 'Personalised offers', description: 'Offers based on what you bought.', basis: 'consent', mechanism: 'explicit', required: false, takes_decision: true },
        { key: 'fraud', label: 'Fraud prevention', description: 'We check orders for fraud.', basis: 'legitimate_interest', mechanism: 'opt_out', required: false, takes_decision: true },
        { key: 'billing', label: 'Billing', description: 'To bill your orders.', basis: 'contract', mechanism: null, required: true, takes_decision: false },
      ],
    },
    approval: null,
    ...overrides,
  };
}

export function informedView(overrides: Partial<ParticipantView> = {}): ParticipantView {
  const base = consentView();
  return consentView({ path: 'informed', status: 'informed', flow: { ...base.flow!, pattern: 'informed' }, ...overrides });
}

export function approvalView(overrides: Partial<ParticipantView> = {}): ParticipantView {
  return {
    ...consentView(),
    session_token: 'dts_test_approval_1',
    kind: 'approval',
    status: 'reviewing',
    flow: null,
    approval: {
      title: 'Refund order 1042',
      description: 'The support agent proposes a full refund.',
      action: 'refund.create',
      value: { amount: 1234550, currency: 'EUR' },
      trigger: 'value',
      agent_id: 'agt_support_7',
    },
    ...overrides,
  };
}

export function inboxItems(): InboxItem[] {
  return [
    { session_token: 'dts_a', kind: 'consent', title: 'Share your contact details', application: { id: 'app_1', name: 'Acme Shop' }, deadline_at: '2025-03-01T12:05:00.000Z', created_at: '2025-03-01T11:00:00.000Z' },
    { session_token: 'dts_b', kind: 'approval', title: 'Refund order 1042', application_name: 'Support Bot', deadline_at: null, created_at: '2025-03-01T10:00:00.000Z', trigger: 'value' },
  ];
}
