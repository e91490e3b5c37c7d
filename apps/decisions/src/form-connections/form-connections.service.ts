import { Inject, Injectable } from '@nestjs/common';
import {
  AuditActor,
  FormConnectionActionRequest,
  FormConnectionCreateRequest,
  FormConnectionMappingRequest,
  FormConnectionMessage,
  FormConnectionRefRequest,
  FormConnectionWithSecretMessage,
  ListPart,
} from '@dcr/contracts';
import {
  assertCapturable,
  FlowTerms,
  FormDefinition,
  formConnectionSealContext,
  newFormConnectionId,
  newFormConnectionSecret,
  notFound,
  openWebhookSecret,
  parseTypeformDefinition,
  PREVIOUS_SECRET_GRACE_MS,
  previousSecretHonoured,
  ResolvedFormMapping,
  resolveFormMapping,
  sealWebhookSecret,
  validationFailed,
  versionInForce,
} from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext, snapshotPart } from '@dcr/service-kit';
import { DataSource, EntityManager } from 'typeorm';
import { FlowsRepository } from '../flows/flows.repository';
import { OutboxRelay, recordEvent } from '../outbox/outbox';
import { FormConnection } from './form-connection.entity';
import { FormConnectionSettings } from './form-connection-settings';
import { TypeformForms } from './typeform-forms';

type StoredMapping = FormConnection['mapping'];

export function formConnectionMessage(row: FormConnection, now = new Date()): FormConnectionMessage {
  const previousHonoured = row.previousSecretSealed !== null && row.secretRotatedAt !== null && previousSecretHonoured(row.secretRotatedAt, now);
  return {
    id: row.id,
    platform: row.platform as 'typeform',
    form_id: row.formId,
    flow_id: row.flowId,
    mapping: row.mapping,
    personal_access_token: row.accessTokenSealed !== null,
    previous_secret_expires_at: previousHonoured ? new Date(row.secretRotatedAt!.getTime() + PREVIOUS_SECRET_GRACE_MS).toISOString() : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The mapping as stored and shown: exactly the fields the rules read, nothing else the caller sent. */
function storedMapping(input: Record<string, unknown>, resolved: ResolvedFormMapping): StoredMapping {
  const purposes = input.purposes as Record<string, { field: string; choice?: string }>;
  return {
    email: resolved.email.field,
    ...(resolved.external_id ? { external_id: resolved.external_id } : {}),
    purposes: Object.fromEntries(
      Object.keys(resolved.purposes).map((key) => [key, { field: purposes[key].field, ...(purposes[key].choice !== undefined ? { choice: purposes[key].choice } : {}) }]),
    ),
  };
}

/**
 * Connections of an application to a hosted form builder's form: every read and change is scoped to
 * the application the gateway authenticated, the mapping is checked against the form and the flow
 * whenever it is saved, and every change goes onto the audit trail in its transaction.
 */
@Injectable()
export class FormConnectionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly flows: FlowsRepository,
    private readonly settings: FormConnectionSettings,
    private readonly typeform: TypeformForms,
    private readonly relay: OutboxRelay,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async create(request: FormConnectionCreateRequest): Promise<FormConnectionWithSecretMessage> {
    const terms = await this.capturableTerms(request.application_id, request.flow_id);
    const definition = await this.definitionOf(request.form_id, request.form_definition, request.personal_access_token);
    const resolved = resolveFormMapping(terms, definition, request.mapping);
    const id = newFormConnectionId(this.context.env.COUNTRY);
    const secret = newFormConnectionSecret();
    const now = new Date();
    const row = Object.assign(new FormConnection(), {
      id,
      applicationId: request.application_id,
      platform: request.platform,
      formId: request.form_id,
      flowId: request.flow_id,
      mapping: storedMapping(request.mapping, resolved),
      formDefinition: definition,
      secretSealed: this.seal(secret, id, 'secret'),
      previousSecretSealed: null,
      secretRotatedAt: null,
      accessTokenSealed: request.personal_access_token ? this.seal(request.personal_access_token, id, 'personal_access_token') : null,
      createdAt: now,
      updatedAt: now,
    });
    await this.change(
      request.application_id,
      request.actor,
      'form_connection.created',
      { connection_id: id, platform: row.platform, form_id: row.formId, flow_id: row.flowId },
      (manager) => manager.insert(FormConnection, row),
    );
    return { ...formConnectionMessage(row, now), secret };
  }

  /** The application's connections, a part at a time (snapshotPart, by creation time and id). */
  async list(applicationId: string, after?: string): Promise<ListPart<FormConnectionMessage>> {
    const rows = await this.dataSource.getRepository(FormConnection).find({ where: { applicationId }, order: { createdAt: 'ASC', id: 'ASC' } });
    const now = new Date();
    return snapshotPart(rows.map((row) => formConnectionMessage(row, now)), (item) => `${item.created_at}#${item.id}`, after);
  }

  async get(request: FormConnectionRefRequest): Promise<FormConnectionMessage> {
    return formConnectionMessage(await this.find(this.dataSource.manager, request.application_id, request.id));
  }

  /** Checks the new mapping against the form (the definition given, else fetched with the kept token, else the one kept) and the flow. */
  async updateMapping(request: FormConnectionMappingRequest): Promise<FormConnectionMessage> {
    const current = await this.find(this.dataSource.manager, request.application_id, request.id);
    const terms = await this.capturableTerms(request.application_id, current.flowId);
    const token = current.accessTokenSealed ? this.open(current.accessTokenSealed, current.id, 'personal_access_token') : undefined;
    const definition =
      (request.form_definition !== undefined && request.form_definition !== null) || token !== undefined
        ? await this.definitionOf(current.formId, request.form_definition, token)
        : current.formDefinition;
    const resolved = resolveFormMapping(terms, definition, request.mapping);
    return this.change(request.application_id, request.actor, 'form_connection.mapping_updated', { connection_id: request.id }, async (manager) => {
      const row = await this.find(manager, request.application_id, request.id, true);
      Object.assign(row, { mapping: storedMapping(request.mapping, resolved), formDefinition: definition, updatedAt: new Date() });
      await manager.save(row);
      return formConnectionMessage(row);
    });
  }

  /**
   * A new secret, shown once. The one it replaces keeps being honoured for a day, so deliveries signed
   * before the organisation updated the builder still arrive; a second rotation within that day drops
   * the oldest.
   */
  async rotateSecret(request: FormConnectionActionRequest): Promise<FormConnectionWithSecretMessage> {
    const secret = newFormConnectionSecret();
    return this.change(request.application_id, request.actor, 'form_connection.secret_rotated', { connection_id: request.id }, async (manager) => {
      const row = await this.find(manager, request.application_id, request.id, true);
      const now = new Date();
      const replaced = this.open(row.secretSealed, row.id, 'secret');
      Object.assign(row, {
        secretSealed: this.seal(secret, row.id, 'secret'),
        previousSecretSealed: this.seal(replaced, row.id, 'previous_secret'),
        secretRotatedAt: now,
        updatedAt: now,
      });
      await manager.save(row);
      return { ...formConnectionMessage(row, now), secret };
    });
  }

  async remove(request: FormConnectionActionRequest): Promise<void> {
    await this.change(request.application_id, request.actor, 'form_connection.deleted', { connection_id: request.id }, async (manager) => {
      const row = await this.find(manager, request.application_id, request.id, true);
      await manager.delete(FormConnection, { id: row.id });
    });
  }

  /** The secrets that may sign a delivery now: the current one and, within its day, the previous one. */
  secretsOf(row: FormConnection): { current: string; previous: { secret: string; rotatedAt: Date } | null } {
    return {
      current: this.open(row.secretSealed, row.id, 'secret'),
      previous:
        row.previousSecretSealed && row.secretRotatedAt ? { secret: this.open(row.previousSecretSealed, row.id, 'previous_secret'), rotatedAt: row.secretRotatedAt } : null,
    };
  }

  /** The active version's terms of a flow of this application, which must be capturable (decisions only, a duration): a mapping is saved against them. */
  private async capturableTerms(applicationId: string, flowId: string): Promise<FlowTerms> {
    const flow = await this.flows.active(flowId);
    if (!flow || flow.applicationId !== applicationId) {
      throw validationFailed([{ field: 'flow_id', reason: 'no active flow with this id in this application' }]);
    }
    const terms = flow.terms as unknown as FlowTerms;
    assertCapturable(terms);
    return terms;
  }

  /**
   * The version of a flow of this application in force at `capturedAt` (ms), as the Record API
   * chooses it (versionInForce: the newest activated at or before it, else the first), with its
   * terms, which must be capturable. The activations are read afresh: a version activated since
   * they were remembered (here, or replicated) must not be missed, as the version is pinned.
   */
  async termsInForceAt(applicationId: string, flowId: string, capturedAt: number): Promise<{ version: number; terms: FlowTerms }> {
    const known = await this.flows.activations(flowId, { fresh: true });
    const version = known && known.applicationId === applicationId ? versionInForce(known.activations, capturedAt) : undefined;
    const flow = version === undefined ? null : await this.flows.version(flowId, version);
    if (!flow) throw validationFailed([{ field: 'flow_id', reason: 'no active flow with this id in this application' }]);
    const terms = flow.terms as unknown as FlowTerms;
    assertCapturable(terms);
    return { version: flow.version, terms };
  }

  private async definitionOf(formId: string, given: Record<string, unknown> | null | undefined, token: string | undefined): Promise<FormDefinition> {
    // `null` is no definition, as when the field is left out (it was fetched with no token at all).
    if (given === null) given = undefined;
    if (given === undefined && token === undefined) {
      throw validationFailed([
        { field: 'form_definition', reason: "is needed to check the mapping: send the JSON of Typeform's GET /forms/{form_id}, or a personal_access_token to fetch it with" },
      ]);
    }
    const definition = parseTypeformDefinition(given ?? (await this.typeform.definition(formId, token!)), 'form_definition');
    if (definition.id !== null && definition.id !== formId) {
      throw validationFailed([{ field: 'form_definition.id', reason: `is ${definition.id}, the definition of another form than ${formId}` }]);
    }
    return definition;
  }

  private async find(manager: EntityManager, applicationId: string, id: string, lock = false): Promise<FormConnection> {
    const row = await manager.getRepository(FormConnection).findOne({
      where: { id, applicationId },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!row) throw notFound('Form connection');
    return row;
  }

  private seal(value: string, id: string, role: 'secret' | 'previous_secret' | 'personal_access_token'): string {
    return sealWebhookSecret(value, this.settings.secretKey, formConnectionSealContext(id, role));
  }

  private open(sealed: string, id: string, role: 'secret' | 'previous_secret' | 'personal_access_token'): string {
    return openWebhookSecret(sealed, this.settings.secretKey, formConnectionSealContext(id, role));
  }

  /** A change and its audit event in one transaction (audit only: connection changes are no webhook events). */
  private async change<T>(
    applicationId: string,
    actor: AuditActor,
    type: string,
    detail: Record<string, unknown>,
    work: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    const result = await this.dataSource.transaction(async (manager) => {
      const value = await work(manager);
      await recordEvent(manager, { type, applicationId, internal: true, data: { ...detail, actor } });
      return value;
    });
    this.relay.kick();
    return result;
  }
}
