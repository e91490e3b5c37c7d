import { Inject, Injectable } from '@nestjs/common';
import {
  CreateSubjectReply,
  CreateSubjectRequest,
  FindSubjectRequest,
  GetSubjectRequest,
  LocateReply,
  LocateRequest,
  RegisterReply,
  RegisterRequest,
  RESIDENCY_LOCATE,
  RESIDENCY_REGISTER,
  SubjectMessage,
} from '@dcr/contracts';
import { DomainError, newSubjectId, normaliseEmail, notFound, subjectReference, validationFailed, wrongCountry } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';
import { EntityManager } from 'typeorm';
import { Subject } from './subject.entity';
import { SubjectsRepository } from './subjects.repository';

const normalisedEmail = (email?: string) => (email ? normaliseEmail(email) || undefined : undefined);

@Injectable()
export class SubjectsService {
  constructor(
    private readonly subjects: SubjectsRepository,
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /**
   * Records a person in this country. Their references go to the directory first: when another
   * country recorded the same person earlier, nothing is written here and the caller learns only
   * the home country.
   */
  /** `manager`: the caller's transaction, when it binds a person while holding a lock. */
  /** `field`: where the request names the person (`subject.` for a decision session's subject), for the refusal of a conflict. */
  async create(request: CreateSubjectRequest, manager?: EntityManager, field = ''): Promise<CreateSubjectReply> {
    const email = normalisedEmail(request.email);
    const externalId = request.external_id?.trim() || undefined;
    if (!email && !externalId) {
      throw validationFailed([{ field: 'subject', reason: 'email or external_id is required' }]);
    }
    const existing = await this.existing(request.application_id, { email, externalId }, manager, field);
    if (existing) return { subject: this.toMessage(existing), created: false };

    const id = newSubjectId(this.context.env.COUNTRY);
    const registered = await firstValueFrom(
      this.clients.own.send<RegisterReply, RegisterRequest>(RESIDENCY_REGISTER, this.newPersonReferences(request.application_id, { email, externalId })),
    );
    if (registered.home_country !== this.context.env.COUNTRY) throw wrongCountry(registered.home_country);

    const inserted = await this.subjects.insertOrFind(
      Object.assign(new Subject(), {
        id,
        applicationId: request.application_id,
        email: email ?? null,
        externalId: externalId ?? null,
        createdAt: new Date(),
      }),
      manager,
    );
    // Another request recorded one of these identifiers meanwhile: decided as if it had come first.
    if (!inserted.created) {
      const raced = await this.existing(request.application_id, { email, externalId }, manager, field);
      return { subject: this.toMessage(raced ?? inserted.subject), created: false };
    }
    return { subject: this.toMessage(inserted.subject), created: true };
  }

  /**
   * The person already recorded by these identifiers, or none; a 422 on `external_id` when they
   * name two people or would drop one, as the Record API refuses it (import-batch's
   * subjectConflict): the external id belongs to another person than the address, or to a person
   * recorded with another address, or the person of the address has another external id.
   */
  private async existing(applicationId: string, by: { email?: string; externalId?: string }, manager: EntityManager | undefined, field: string): Promise<Subject | null> {
    const byId = by.externalId ? await this.subjects.findByReference(applicationId, { externalId: by.externalId }, manager) : null;
    const byAddress = by.email ? await this.subjects.findByReference(applicationId, { email: by.email }, manager) : null;
    if (by.email && by.externalId) {
      const conflict = (reason: string) => validationFailed([{ field: `${field}external_id`, reason }]);
      if (byId && byAddress && byId.id !== byAddress.id) throw conflict(`belongs to another person of this application than ${field}email`);
      if (byId && !byAddress && byId.email !== null) throw conflict('belongs to a person of this application recorded with another e-mail address');
      if (!byId && byAddress?.externalId) throw conflict('the person recorded with this e-mail address has another external_id');
    }
    return byId ?? byAddress;
  }

  async get(request: GetSubjectRequest): Promise<SubjectMessage> {
    const subject = await this.subjects.findById(request.application_id, request.subject_id);
    if (!subject) throw notFound('Subject');
    return this.toMessage(subject);
  }

  async find(request: FindSubjectRequest): Promise<SubjectMessage> {
    const email = normalisedEmail(request.email);
    const externalId = request.external_id?.trim() || undefined;
    if (!email && !externalId) {
      throw new DomainError('invalid_request', 'Give email or external_id', [
        { field: 'external_id', reason: 'email or external_id is required' },
      ]);
    }
    const subject = await this.subjects.findByReference(request.application_id, { email, externalId });
    if (!subject) throw notFound('Subject');
    return this.toMessage(subject);
  }

  /**
   * Where the directory homes a person given by e-mail (and external id), without homing them:
   * undefined when no country knows them yet. Only the keyed references go to the residency-router.
   */
  async homeOf(applicationId: string, by: { email: string; external_id?: string }): Promise<string | undefined> {
    const email = normalisedEmail(by.email);
    const externalId = by.external_id?.trim() || undefined;
    const { references } = this.newPersonReferences(applicationId, { email, externalId });
    if (references.length === 0) return undefined;
    const { entry } = await firstValueFrom(this.clients.own.send<LocateReply, LocateRequest>(RESIDENCY_LOCATE, { references }));
    return entry?.home_country;
  }

  /**
   * A new person's opaque directory references (keyed hashes of their external id and e-mail) as the
   * directory registers them: either may be known already (homed here or elsewhere). Their id is not
   * among them: it names its country itself (newSubjectId), so no country needs an entry for it.
   */
  newPersonReferences(applicationId: string, by: { email?: string; externalId?: string }): RegisterRequest {
    const key = this.context.env.SUBJECT_REF_KEY;
    const references: string[] = [];
    if (by.externalId) references.push(subjectReference(key, applicationId, 'external_id', by.externalId));
    if (by.email) references.push(subjectReference(key, applicationId, 'email', by.email));
    return { references };
  }

  private toMessage(subject: Subject): SubjectMessage {
    return {
      id: subject.id,
      application_id: subject.applicationId,
      home_country: this.context.env.COUNTRY,
      email: subject.email,
      external_id: subject.externalId,
      created_at: subject.createdAt.toISOString(),
    };
  }
}
