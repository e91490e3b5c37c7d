import * as domain from '..';

describe('flows and decisions exports', () => {
  it('are reachable from the package root', () => {
    for (const name of [
      'DECISION_STATUSES',
      'IN_FLIGHT_STATUSES',
      'TERMINAL_STATUSES',
      'isInFlight',
      'isTerminal',
      'nextStatuses',
      'assertTransition',
      'normaliseOutcome',
      'completionStatus',
      'completableFrom',
      'assertCompletable',
      'eventTypeFor',
      'DEADLINE_TICKS_SECONDS',
      'deadlineLevel',
      'APPROVAL_TRIGGERS',
      'normaliseFlowTerms',
      'flowInputOf',
      'parseIsoDuration',
      'addIsoDuration',
      'isCapturable',
      'termsFingerprint',
      'termsDiffer',
      'canonicalJson',
      'noticeFingerprint',
    ]) {
      expect(domain).toHaveProperty(name);
    }
  });
});
