import { Inject, Injectable } from '@nestjs/common';
import {
  CreateFlowRequest,
  FlowIdRequest,
  FlowMessage,
  FlowPage,
  GetFlowRequest,
  ListFlowsRequest,
  UpdateFlowRequest,
} from '@dcr/contracts';
import { decodeCursor, DomainError, encodeCursor, flowInputOf, FlowTerms, newFlowId, normaliseFlowTerms, notFound, termsFingerprint } from '@dcr/domain';
import { leadingWithin, SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { DataSource } from 'typeorm';
import { OutboxRelay, recordEvent } from '../outbox/outbox';
import { FlowReplicator } from './flow-replicator';
import { FlowVersion } from './flow-version.entity';
import { toFlowMessage } from './flow-message';
import { FlowsRepository } from './flows.repository';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

const immutable = (version: number) =>
  new DomainError('conflict', `Version ${version} of this flow is active and its terms never change; publish a new version instead`);

/** Authoring flows: drafts are edited, activation freezes the terms, a new version supersedes. */
@Injectable()
export class FlowsService {
  constructor(
    private readonly flows: FlowsRepository,
    private readonly dataSource: DataSource,
    private readonly replicator: FlowReplicator,
    private readonly relay: OutboxRelay,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async create(request: CreateFlowRequest): Promise<FlowMessage> {
    const terms = normaliseFlowTerms(request.terms);
    const now = new Date();
    const row = Object.assign(new FlowVersion(), {
      id: newFlowId(this.context.env.REGION),
      version: 1,
      applicationId: request.application_id,
      status: 'draft' as const,
      terms: terms as unknown as Record<string, unknown>,
      termsFingerprint: termsFingerprint(terms),
      authoredIn: this.context.env.COUNTRY,
      revision: 1,
      createdAt: now,
      updatedAt: now,
      activatedAt: null,
      supersededAt: null,
    });
    await this.dataSource.getRepository(FlowVersion).insert(row as QueryDeepPartialEntity<FlowVersion>);
    this.replicator.push([row]);
    return toFlowMessage(row);
  }

  async get(request: GetFlowRequest): Promise<FlowMessage> {
    const row = request.version
      ? await this.flows.version(request.flow_id, request.version)
      : request.active
        ? await this.flows.active(request.flow_id)
        : await this.flows.latest(request.flow_id);
    if (!row) throw notFound('Flow');
    return toFlowMessage(row);
  }

  async list(request: ListFlowsRequest): Promise<FlowPage> {
    const after = decodeCursor<{ created_at: string; id: string }>(request.cursor);
    if (after && (typeof after.created_at !== 'string' || typeof after.id !== 'string')) {
      throw new DomainError('invalid_request', 'The cursor is not valid', [{ field: 'cursor', reason: 'not a cursor of this list' }]);
    }
    const rows = await this.flows.page(request.application_id, request.limit + 1, after);
    // Up to `limit` flows, and no more than fit one message on the bus (a flow of 100 purposes with
    // their descriptions is a few hundred KB): a page cut short still names where the next begins.
    const data = leadingWithin(rows.slice(0, request.limit).map(toFlowMessage));
    const last = rows[data.length - 1];
    return {
      data,
      next_cursor: rows.length > data.length && last ? encodeCursor({ created_at: last.createdAt.toISOString(), id: last.id }) : null,
    };
  }

  /** Changes a draft; the whole merged terms are validated again. */
  async update(request: UpdateFlowRequest): Promise<FlowMessage> {
    const row = await this.dataSource.transaction(async (manager) => {
      const versions = await this.flows.lockVersions(manager, request.flow_id);
      const latest = versions[versions.length - 1];
      if (!latest) throw notFound('Flow');
      if (latest.status !== 'draft') throw immutable(latest.version);
      const terms = this.merge(latest.terms, request.changes);
      Object.assign(latest, {
        terms: terms as unknown as Record<string, unknown>,
        termsFingerprint: termsFingerprint(terms),
        revision: latest.revision + 1,
        updatedAt: new Date(),
      });
      await manager.save(latest);
      return latest;
    });
    this.replicator.push([row]);
    return toFlowMessage(row);
  }

  /** Activates the newest draft; the version active until now is superseded. Fires `flow.activated`. */
  async activate(request: FlowIdRequest): Promise<FlowMessage> {
    const { changed, current } = await this.dataSource.transaction(async (manager) => {
      const versions = await this.flows.lockVersions(manager, request.flow_id);
      const latest = versions[versions.length - 1];
      if (!latest) throw notFound('Flow');
      if (latest.status === 'active') return { changed: [] as FlowVersion[], current: latest };
      if (latest.status !== 'draft') throw new DomainError('conflict', 'Only a draft version can be activated');
      const now = new Date();
      const changed: FlowVersion[] = [];
      for (const previous of versions) {
        if (previous.status !== 'active') continue;
        Object.assign(previous, { status: 'superseded', supersededAt: now, updatedAt: now, revision: previous.revision + 1 });
        changed.push(previous);
      }
      Object.assign(latest, { status: 'active', activatedAt: now, updatedAt: now, revision: latest.revision + 1 });
      changed.push(latest);
      await manager.save(changed);
      await recordEvent(manager, {
        type: 'flow.activated',
        applicationId: latest.applicationId,
        occurredAt: now,
        data: {
          flow_id: latest.id,
          version: latest.version,
          terms_fingerprint: latest.termsFingerprint,
          supersedes: changed.length > 1 ? changed[0].version : null,
        },
      });
      return { changed, current: latest };
    });
    if (changed.length > 0) {
      // New sessions would find the remembered version superseded at their insert; this spares them the retry.
      this.flows.forget(request.flow_id);
      this.relay.kick();
      this.replicator.push(changed);
    }
    return toFlowMessage(current);
  }

  /** A new draft version with changed terms; it governs new sessions once activated. */
  async newVersion(request: UpdateFlowRequest): Promise<FlowMessage> {
    const row = await this.dataSource.transaction(async (manager) => {
      const versions = await this.flows.lockVersions(manager, request.flow_id);
      const latest = versions[versions.length - 1];
      if (!latest) throw notFound('Flow');
      if (latest.status === 'draft') {
        throw new DomainError('conflict', `Version ${latest.version} is still a draft: change it (PATCH) or activate it first`);
      }
      const terms = this.merge(latest.terms, request.changes);
      const fingerprint = termsFingerprint(terms);
      if (fingerprint === latest.termsFingerprint) {
        throw new DomainError('conflict', `The terms are the same as version ${latest.version}; a new version must change something`);
      }
      const now = new Date();
      const next = Object.assign(new FlowVersion(), {
        id: latest.id,
        version: latest.version + 1,
        applicationId: latest.applicationId,
        status: 'draft' as const,
        terms: terms as unknown as Record<string, unknown>,
        termsFingerprint: fingerprint,
        authoredIn: latest.authoredIn,
        revision: 1,
        createdAt: now,
        updatedAt: now,
        activatedAt: null,
        supersededAt: null,
      });
      await manager.insert(FlowVersion, next as QueryDeepPartialEntity<FlowVersion>);
      return next;
    });
    this.replicator.push([row]);
    return toFlowMessage(row);
  }

  private merge(current: Record<string, unknown>, changes: Record<string, unknown>): FlowTerms {
    const base: Record<string, unknown> = { ...flowInputOf(current as unknown as FlowTerms) };
    // Changing the purpose list without definitions keeps the definitions of the keys that stay.
    if (Array.isArray(changes.purposes) && changes.purpose_definitions === undefined) {
      const keep = new Set(changes.purposes as string[]);
      const definitions = base.purpose_definitions as Record<string, unknown>;
      base.purpose_definitions = Object.fromEntries(Object.entries(definitions).filter(([key]) => keep.has(key)));
    }
    return normaliseFlowTerms({ ...base, ...changes });
  }
}
