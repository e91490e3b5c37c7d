import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  CreateSubjectReply,
  CreateSubjectRequest,
  FindSubjectRequest,
  GetSubjectRequest,
  LocateReply,
  LocateRequest,
  RegisterReply,
  RegisterRequest,
  ReleaseReply,
  ReleaseRequest,
  RESIDENCY_LOCATE,
  RESIDENCY_REGISTER,
  RESIDENCY_RELEASE,
  SubjectMessage,
} from '@dcr/contracts';
import { DomainError, matchSubject, newSubjectId, normaliseEmail, notFound, subjectReference, SubjectMatch, validationFailed, wrongCountry } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';
import { EntityManager } from 'typeorm';
import { Subject } from './subject.entity';
import { SubjectsRepository } from './subjects.repository';

const normalisedEmail = (email?: string) => (email ? normaliseEmail(email) || undefined : undefined);
/** How many times create decides again after another request changed the person (a bind or an insert that lost). */
const CREATE_ATTEMPTS = 3;

@Injectable()
export class SubjectsService {
  private readonly logger = new Logger(SubjectsService.name);

  constructor(
    private readonly subjects: SubjectsRepository,
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /**
   * Records a person in this country. Their references go to the directory first: when another
   * country recorded the same person earlier, nothing is written here and the caller learns only
   * the home country. A person found by one identifier who lacks the other given is bound to it
   * (bindIdentifier), as the Record API binds it; identifiers naming two people are refused.
   * `manager`: the caller's transaction, when it binds a person while holding a lock.
   * `field`: where the request names the person (`subject.` for a decision session's subject), for the refusal of a conflict.
   */
  async create(request: CreateSubjectRequest, manager?: EntityManager, field = ''): Promise<CreateSubjectReply> {
    const email = normalisedEmail(request.email);
    const externalId = request.external_id?.trim() || undefined;
    if (!email && !externalId) {
      throw validationFailed([{ field: 'subject', reason: 'email or external_id is required' }]);
    }
    // Decided again when another request changed the person meanwhile (a bind or an insert that lost).
    for (let attempt = 1; ; attempt++) {
      const match = await this.match(request.application_id, { email, externalId }, manager, field);
      if (match.kind === 'found') return { subject: this.toMessage(match.person), created: false };
      if (match.kind === 'bind') {
        const bound = await this.bindIdentifier(request.application_id, match.person, match.field, match.value, manager, field);
        if (bound) return { subject: this.toMessage(bound), created: false };
      } else {
        const created = await this.createNew(request.application_id, { email, externalId }, manager);
        if (created) return { subject: this.toMessage(created), created: true };
      }
      if (attempt === CREATE_ATTEMPTS) throw new DomainError('conflict', 'Another request changed this person at the same moment; send the request again');
    }
  }

  /** A new person homed here and inserted, or null when another request recorded one of their identifiers meanwhile. */
  private async createNew(applicationId: string, by: { email?: string; externalId?: string }, manager: EntityManager | undefined): Promise<Subject | null> {
    const id = newSubjectId(this.context.env.COUNTRY);
    const registered = await firstValueFrom(this.clients.own.send<RegisterReply, RegisterRequest>(RESIDENCY_REGISTER, this.newPersonReferences(applicationId, by)));
    if (registered.home_country !== this.context.env.COUNTRY) throw wrongCountry(registered.home_country);
    const inserted = await this.subjects.insertOrFind(
      Object.assign(new Subject(), { id, applicationId, email: by.email ?? null, externalId: by.externalId ?? null, createdAt: new Date() }),
      manager,
    );
    return inserted.created ? inserted.subject : null;
  }

  /**
   * Keeps `value` for `person`, found by their other identifier, as the Record API keeps it
   * (import-batch registerBindings): the directory learns its reference first, homed where the
   * person is (the reference they are known by goes first, so their home decides), and an identifier
   * the directory homes in another country names another person there and is refused (422 on it).
   * Answers the person bound, or null when another request gave them an identifier or gave this one
   * to someone else first: the directory's new entry is then released (unless another request relies
   * on it), so nothing of the losing request stays, and the caller decides again.
   */
  private async bindIdentifier(applicationId: string, person: Subject, kind: 'email' | 'external_id', value: string, manager: EntityManager | undefined, field: string): Promise<Subject | null> {
    const key = this.context.env.SUBJECT_REF_KEY;
    const known = kind === 'email' ? subjectReference(key, applicationId, 'external_id', person.externalId!) : subjectReference(key, applicationId, 'email', person.email!);
    const reference = subjectReference(key, applicationId, kind, value);
    const registered = await firstValueFrom(this.clients.own.send<RegisterReply, RegisterRequest>(RESIDENCY_REGISTER, { references: [known, reference] }));
    const taken = () => validationFailed([{ field: `${field}${kind}`, reason: 'belongs to another person of this application' }]);
    if (registered.home_country !== this.context.env.COUNTRY) {
      // The directory answers another country for the person when the identifier is homed there
      // (someone there has it: 422), or when the person's own entry is (they live there: 421).
      const { entry: own } = await firstValueFrom(this.clients.own.send<LocateReply, LocateRequest>(RESIDENCY_LOCATE, { references: [known] }));
      if (own?.home_country === this.context.env.COUNTRY) throw taken();
      throw wrongCountry(registered.home_country);
    }
    const { entry } = await firstValueFrom(this.clients.own.send<LocateReply, LocateRequest>(RESIDENCY_LOCATE, { references: [reference] }));
    if (entry && entry.home_country !== this.context.env.COUNTRY) throw taken();
    let bound = false;
    try {
      bound = await this.subjects.bind(applicationId, person.id, kind, value, manager);
    } finally {
      if (!bound) await this.releaseUnbound(applicationId, kind, value, reference);
    }
    return bound ? Object.assign(person, kind === 'email' ? { email: value } : { externalId: value }) : null;
  }

  /**
   * The directory entry a bind that lost made for `value`, released unless someone here holds the
   * identifier by now (the release itself also leaves an entry another registration has relied on).
   * Best effort, as a failed import's release: an entry left behind stays homed here.
   */
  private async releaseUnbound(applicationId: string, kind: 'email' | 'external_id', value: string, reference: string): Promise<void> {
    try {
      if (await this.subjects.findByReference(applicationId, kind === 'email' ? { email: value } : { externalId: value })) return;
      await firstValueFrom(this.clients.own.send<ReleaseReply, ReleaseRequest>(RESIDENCY_RELEASE, { references: [reference] }));
    } catch (error) {
      this.logger.warn(`the directory entry of an identifier whose bind lost was not released (${String(error)}); it stays homed here`);
    }
  }

  /** Who the identifiers name here (matchSubject); a conflict is refused (422 on `external_id`), as the Record API refuses it. */
  private async match(applicationId: string, by: { email?: string; externalId?: string }, manager: EntityManager | undefined, field: string): Promise<SubjectMatch<Subject>> {
    const byId = by.externalId ? await this.subjects.findByReference(applicationId, { externalId: by.externalId }, manager) : null;
    const byAddress = by.email ? await this.subjects.findByReference(applicationId, { email: by.email }, manager) : null;
    const match = matchSubject(by, byId, byAddress, `${field}email`);
    if (match.kind === 'conflict') throw validationFailed([{ field: `${field}${match.field}`, reason: match.reason }]);
    return match;
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
