import { DecisionsEnvironment } from '@dcr/config';
import { ServiceDefinition } from '@dcr/service-kit';
import { DECISIONS_ENTITIES, DecisionsModule } from './decisions.module';
import { CreateSubjects1763800000000 } from './migrations/1763800000000-create-subjects';
import { CreateFlowsAndSessions1763900000000 } from './migrations/1763900000000-create-flows-and-sessions';
import { CreateInbox1764000000000 } from './migrations/1764000000000-create-inbox';
import { NarrowSessionIndexes1764900000000 } from './migrations/1764900000000-narrow-session-indexes';
import { CreateConsentRecords1764400000000 } from './migrations/1764400000000-create-consent-records';
import { CreateFormConnections1764600000000 } from './migrations/1764600000000-create-form-connections';
import { AddCaptureRendering1764700000000 } from './migrations/1764700000000-add-capture-rendering';
import { CreatePreviewTemplates1764800000000 } from './migrations/1764800000000-create-preview-templates';
import { OutboxDeletesRelayedRows1765000000000 } from './migrations/1765000000000-outbox-deletes-relayed-rows';
import { OutboxRelaysByEventId1765300000000 } from './migrations/1765300000000-outbox-relays-by-event-id';
import { InboxKeepsNoAddress1765400000000 } from './migrations/1765400000000-inbox-keeps-no-address';
import { ConsentRecordChainsAreLinear1765500000000 } from './migrations/1765500000000-consent-record-chains-are-linear';
import { SignInCodesKeepNoAddress1765600000000 } from './migrations/1765600000000-sign-in-codes-keep-no-address';
import { ImportsSayHowTheyEnded1765700000000 } from './migrations/1765700000000-imports-say-how-they-ended';
import { SessionsFoundByRecord1765800000000 } from './migrations/1765800000000-sessions-found-by-record';
import { SessionsRecordNoticeShown1765900000000 } from './migrations/1765900000000-sessions-record-notice-shown';
import { SessionsAnswerConsentStatus1766000000000 } from './migrations/1766000000000-sessions-answer-consent-status';
import { CapturesCommittedInOneCountry1766100000000 } from './migrations/1766100000000-captures-committed-in-one-country';
import { SessionTokensKeptAsHashes1766300000000 } from './migrations/1766300000000-session-tokens-kept-as-hashes';
import { CapturesAnswerTheirRetries1766400000000 } from './migrations/1766400000000-captures-answer-their-retries';
import { RecordsReadByPage1766531000000 } from './migrations/1766531000000-records-read-by-page';
import { EndedSessionsForgetTheirPerson1766900000000 } from './migrations/1766900000000-ended-sessions-forget-their-person';
import { SessionsBoundToTheirSignIn1767000000000 } from './migrations/1767000000000-sessions-bound-to-their-sign-in';
import { HostedConsentsWithdrawnByPurpose1766800000000 } from './migrations/1766800000000-hosted-consents-withdrawn-by-purpose';

export const decisionsService: ServiceDefinition = {
  name: 'decisions',
  schema: 'decisions',
  entities: DECISIONS_ENTITIES,
  migrations: [CreateSubjects1763800000000, CreateFlowsAndSessions1763900000000, CreateInbox1764000000000, CreateConsentRecords1764400000000, CreateFormConnections1764600000000, AddCaptureRendering1764700000000, CreatePreviewTemplates1764800000000, NarrowSessionIndexes1764900000000, OutboxDeletesRelayedRows1765000000000, OutboxRelaysByEventId1765300000000, InboxKeepsNoAddress1765400000000, ConsentRecordChainsAreLinear1765500000000, SignInCodesKeepNoAddress1765600000000, ImportsSayHowTheyEnded1765700000000, SessionsFoundByRecord1765800000000, SessionsRecordNoticeShown1765900000000, SessionsAnswerConsentStatus1766000000000, CapturesCommittedInOneCountry1766100000000, SessionTokensKeptAsHashes1766300000000, CapturesAnswerTheirRetries1766400000000, RecordsReadByPage1766531000000, HostedConsentsWithdrawnByPurpose1766800000000, EndedSessionsForgetTheirPerson1766900000000, SessionsBoundToTheirSignIn1767000000000],
  module: DecisionsModule,
  environment: DecisionsEnvironment,
};
