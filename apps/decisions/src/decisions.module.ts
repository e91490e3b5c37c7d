import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { InboxController } from './inbox/inbox.controller';
import { InboxService } from './inbox/inbox.service';
import { InboxSession } from './inbox/inbox-session.entity';
import { FlowReplicator } from './flows/flow-replicator';
import { FlowVersion } from './flows/flow-version.entity';
import { FlowsController } from './flows/flows.controller';
import { FlowsRepository } from './flows/flows.repository';
import { FlowsService } from './flows/flows.service';
import { DevMail } from './mail/dev-mail.entity';
import { MailTransport } from './mail/mail-transport';
import { OutboxRelay } from './outbox/outbox';
import { OutboxEvent } from '@dcr/service-kit';
import { Completion } from './sessions/completion';
import { CreateDecision } from './sessions/create-decision';
import { DecisionSession } from './sessions/decision-session.entity';
import { ParticipantSteps } from './sessions/participant-steps';
import { SessionExpiry } from './sessions/session-expiry';
import { RetentionSweep } from './retention/retention-sweep';
import { SessionsController } from './sessions/sessions.controller';
import { SessionTokens } from './sessions/session-tokens';
import { SessionsRepository } from './sessions/sessions.repository';
import { SignInCode } from './sessions/sign-in-code.entity';
import { Capture } from './records/capture.entity';
import { CaptureClaims } from './records/capture-claims';
import { CommitCaptureHeldElsewhere } from './records/capture-held-elsewhere';
import { Captures } from './records/captures';
import { CommitCapture } from './records/commit-capture';
import { ConsentImport } from './records/consent-import.entity';
import { ConsentRecord } from './records/consent-record.entity';
import { ImportBatch } from './records/import-batch';
import { PersonRecords } from './records/person-records';
import { ReceiptMailer } from './records/receipt-mailer';
import { ImportConsentRecords } from './records/import-consent-records';
import { ConsentStatus } from './records/consent-status';
import { RecordConsent } from './records/record-consent';
import { RecordWriter } from './records/record-writer';
import { RecordsController } from './records/records.controller';
import { FormConnection } from './form-connections/form-connection.entity';
import { FormConnectionSettings } from './form-connections/form-connection-settings';
import { FormConnectionsController } from './form-connections/form-connections.controller';
import { FormConnectionsService } from './form-connections/form-connections.service';
import { ReceiveFormSubmission } from './form-connections/receive-form-submission';
import { TypeformForms } from './form-connections/typeform-forms';
import { PreviewTemplate } from './templates/preview-template.entity';
import { PreviewTemplatesController } from './templates/preview-templates.controller';
import { PreviewTemplatesService } from './templates/preview-templates.service';
import { ResourceOwners, ResourceOwnersController } from './resources/resource-owners';
import { Subject } from './subjects/subject.entity';
import { SubjectsController } from './subjects/subjects.controller';
import { SubjectsRepository } from './subjects/subjects.repository';
import { SubjectsService } from './subjects/subjects.service';

export const DECISIONS_ENTITIES = [Subject, FlowVersion, DecisionSession, SignInCode, OutboxEvent, DevMail, InboxSession, ConsentRecord, ConsentImport, Capture, FormConnection, PreviewTemplate];

/** Subjects, flows, sessions and their outbox: everything the decisions service owns. */
@Module({
  imports: [ScheduleModule.forRoot(), TypeOrmModule.forFeature(DECISIONS_ENTITIES)],
  controllers: [SubjectsController, FlowsController, SessionsController, InboxController, RecordsController, FormConnectionsController, PreviewTemplatesController, ResourceOwnersController],
  providers: [
    ResourceOwners,
    SubjectsRepository,
    SubjectsService,
    FlowsRepository,
    FlowsService,
    FlowReplicator,
    OutboxRelay,
    MailTransport,
    SessionsRepository,
    SessionTokens,
    CreateDecision,
    ParticipantSteps,
    Completion,
    SessionExpiry,
    RetentionSweep,
    InboxService,
    RecordConsent,
    RecordWriter,
    ConsentStatus,
    ImportConsentRecords,
    ImportBatch,
    Captures,
    CaptureClaims,
    CommitCapture,
    CommitCaptureHeldElsewhere,
    PersonRecords,
    ReceiptMailer,
    FormConnectionSettings,
    TypeformForms,
    FormConnectionsService,
    ReceiveFormSubmission,
    PreviewTemplatesService,
  ],
})
export class DecisionsModule {}
