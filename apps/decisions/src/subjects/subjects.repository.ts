import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { Subject } from './subject.entity';

const UNIQUE_VIOLATION = '23505';

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

  /**
   * Keeps an identifier for a person recorded without it, only while they still have none (the
   * update waits for another request's update of the row, then checks again). Answers false when
   * that request gave them one first, or gave the identifier to another person (the unique index):
   * the caller then decides again by what is recorded. In a caller's transaction the update runs
   * under a savepoint, so losing to the index leaves the transaction usable.
   */
  async bind(applicationId: string, id: string, field: 'email' | 'external_id', value: string, manager: EntityManager = this.subjects.manager): Promise<boolean> {
    const update = async () => {
      const { affected } = await manager
        .createQueryBuilder()
        .update(Subject)
        .set(field === 'email' ? { email: value } : { externalId: value })
        .where(`"application_id" = :applicationId AND "id" = :id AND "${field}" IS NULL`, { applicationId, id })
        .execute();
      return affected === 1;
    };
    const savepoint = manager.queryRunner?.isTransactionActive === true;
    if (savepoint) await manager.query('SAVEPOINT "subject_bind"');
    try {
      const bound = await update();
      if (savepoint) await manager.query('RELEASE SAVEPOINT "subject_bind"');
      return bound;
    } catch (error) {
      if (savepoint) await manager.query('ROLLBACK TO SAVEPOINT "subject_bind"');
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) return false;
      throw error;
    }
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
