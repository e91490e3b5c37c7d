/** Trigger types of an approval (the inbox filters by them): the six bounds an agent may hit. */
export const APPROVAL_TRIGGERS = ['scope', 'action', 'value', 'time', 'escalation', 'reputation'] as const;
export type ApprovalTrigger = (typeof APPROVAL_TRIGGERS)[number];

export function isApprovalTrigger(value: unknown): value is ApprovalTrigger {
  return typeof value === 'string' && (APPROVAL_TRIGGERS as readonly string[]).includes(value);
}
