import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { OutboxEvent } from '@dcr/service-kit';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ActivityEventRecord } from './activity/activity-event.entity';
import { ActivityController } from './activity/activity.controller';
import { AnchorsController, WitnessController } from './audit/anchors.controller';
import { AuditController } from './audit/audit.controller';
import { CapturesController } from './records/captures.controller';
import { RecordsController } from './records/records.controller';
import { ConsentReceiptsController, PendingReceiptsController, ReceiptDiscoveryController } from './receipts/receipts.controller';
import { CrossBorderController } from './residency/cross-border.controller';
import { AgentsAndOidcController } from './not-built/agents-and-oidc.controller';
import { WebhookDeliveriesController, WebhooksController } from './webhooks/webhooks.controller';
import { FormConnectionsController } from './form-connections/form-connections.controller';
import { FormHooksController } from './form-connections/form-hooks.controller';
import { ConfigurationAuditRelay } from './connect/configuration-audit';
import { ActivityRecorder } from './activity/activity.recorder';
import { Authenticator } from './auth/authenticator';
import { RoutePolicies } from './auth/route-policies';
import { ControllerMethods } from './http/controller-methods';
import { ApplicationsController } from './connect/applications.controller';
import { ApplicationsService } from './connect/applications.service';
import { ConfigReplicator } from './connect/config-replicator';
import { ConfigSyncController } from './connect/config-sync.controller';
import { AllowedOriginRecord, ApiTokenRecord, ApplicationRecord, PublishableKeyRecord } from './connect/connect.entities';
import { ConnectRepository } from './connect/connect.repository';
import { CredentialIndex } from './connect/credential-index';
import { CredentialsController } from './connect/credentials.controller';
import { CredentialsService } from './connect/credentials.service';
import { MeController } from './connect/me.controller';
import { OriginsController } from './connect/origins.controller';
import { OriginsService } from './connect/origins.service';
import { TokenUseRecorder } from './connect/token-use-recorder';
import { DecisionAccess } from './decisions/decision-access';
import { DecisionsController } from './decisions/decisions.controller';
import { DevMailboxController } from './decisions/dev-mailbox.controller';
import { ParticipantController } from './decisions/participant.controller';
import { FlowsController } from './flows/flows.controller';
import { HostedPagesController } from './hosted/hosted-pages.controller';
import { InboxPagesController } from './hosted/inbox-pages.controller';
import { IdempotencyKeyRecord } from './idempotency/idempotency-key.entity';
import { IdempotencyService } from './idempotency/idempotency.service';
import { InboxReader } from './inbox/inbox-reader';
import { InboxController } from './inbox/inbox.controller';
import { SignInCodeLimit } from './inbox/sign-in-code-limit';
import { CorsPolicy } from './http/cors.policy';
import { RateLimitService } from './http/rate-limit.service';
import { GatewayMetrics } from './observability/gateway-metrics';
import { HealthController } from './observability/health.controller';
import { OpenApiDocument } from './openapi/openapi-document';
import { WellKnownController } from './openapi/well-known.controller';
import { HomeCountry, HomeCountryController } from './residency/home-country';
import { AccountApplications } from './auth/account-applications';
import { ResidencyLookup } from './residency/residency-lookup';
import { ClientScripts } from './sdk/client-scripts';
import { ClientScriptsController } from './sdk/client-scripts.controller';
import { FlowWordingController } from './sdk/flow-wording.controller';
import { TemplatePreviewsController } from './sdk/template-previews.controller';
import { PreviewPageController } from './sdk/preview-page.controller';
import { PreviewTokens } from './sdk/preview-tokens';
import { ConsentFieldController } from './sdk/consent-field.controller';
import { RenderProofs } from './sdk/render-proofs';
import { SubjectsController } from './residency/subjects.controller';

export const GATEWAY_ENTITIES = [
  ApplicationRecord,
  ApiTokenRecord,
  PublishableKeyRecord,
  AllowedOriginRecord,
  ActivityEventRecord,
  IdempotencyKeyRecord,
  OutboxEvent,
];

@Module({
  imports: [ScheduleModule.forRoot(), TypeOrmModule.forFeature(GATEWAY_ENTITIES)],
  controllers: [
    HealthController,
    WellKnownController,
    MeController,
    ApplicationsController,
    CredentialsController,
    OriginsController,
    SubjectsController,
    ActivityController,
    ConfigSyncController,
    HomeCountryController,
    FlowsController,
    DecisionsController,
    ParticipantController,
    DevMailboxController,
    AuditController,
    AnchorsController,
    WitnessController,
    WebhooksController,
    WebhookDeliveriesController,
    FormConnectionsController,
    FormHooksController,
    ConsentReceiptsController,
    RecordsController,
    CapturesController,
    PendingReceiptsController,
    CrossBorderController,
    AgentsAndOidcController,
    ReceiptDiscoveryController,
    HostedPagesController,
    InboxController,
    InboxPagesController,
    ClientScriptsController,
    FlowWordingController,
    TemplatePreviewsController,
    PreviewPageController,
    ConsentFieldController,
  ],
  providers: [
    Authenticator,
    RoutePolicies,
    ControllerMethods,
    GatewayMetrics,
    CredentialIndex,
    ConnectRepository,
    ConfigurationAuditRelay,
    ConfigReplicator,
    TokenUseRecorder,
    RateLimitService,
    ApplicationsService,
    CredentialsService,
    OriginsService,
    ResidencyLookup,
    HomeCountry,
    AccountApplications,
    ActivityRecorder,
    CorsPolicy,
    OpenApiDocument,
    DecisionAccess,
    InboxReader,
    SignInCodeLimit,
    IdempotencyService,
    ClientScripts,
    RenderProofs,
    PreviewTokens,
  ],
})
export class GatewayModule {}
