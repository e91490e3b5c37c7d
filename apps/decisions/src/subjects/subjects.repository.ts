import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { Subject } from './subject.entity';

@Injectable()
export class SubjectsRepository {
  constructor(@InjectRepository(Subject) private readonly subjects: Repository<Subject>) {}

  findById(applicationId: string, id: string): Promise<Subject | null> {
    return this.subjects.findOne({ where: { applicationId, id } });
  }

  async findByReference(
    applicationId: string,
    by: { email?: string; externalId?: string },
    manager: EntityManager = this.subjects.manager,
  ): Promise<Subject | null> {
    if (by.externalId) {
      const found = await manager.findOne(Subject, { where: { applicationId, externalId: by.externalId } });
      if (found) return found;
    }
    if (by.email) return manager.findOne(Subject, { where: { applicationId, email: by.email } });
    return null;
  }

  /** Inserts unless the same person is already there; returns the row that exists afterwards. */
  async insertOrFind(subject: Subject, manager: EntityManager = this.subjects.manager): Promise<{ subject: Subject; created: boolean }> {
    const result = await manager.createQueryBuilder().insert().into(Subject).values(subject).orIgnore().execute();
    if ((result.raw as unknown[]).length > 0) return { subject, created: true };
    const existing = await this.findByReference(
      subject.applicationId,
      { email: subject.email ?? undefined, externalId: subject.externalId ?? undefined },
      manager,
    );
    if (!existing) throw new Error('subject insert was ignored but no conflicting row was found');
    return { subject: existing, created: false };
  }
}
