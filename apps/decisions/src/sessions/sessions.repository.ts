import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, LessThan, Repository } from 'typeorm';
import { IN_FLIGHT_STATUSES } from '@dcr/domain';
import { DecisionSession } from './decision-session.entity';
import { SignInCode } from './sign-in-code.entity';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

/** Sessions and sign-in codes in this country's database; no rules here, only queries. */
@Injectable()
export class SessionsRepository {
  constructor(
    @InjectRepository(DecisionSession) private readonly sessions: Repository<DecisionSession>,
    @InjectRepository(SignInCode) private readonly codes: Repository<SignInCode>,
  ) {}

  find(token: string, manager: EntityManager = this.sessions.manager): Promise<DecisionSession | null> {
    return manager.findOne(DecisionSession, { where: { token } });
  }

  /** The session row locked for the rest of the transaction: one move at a time per session. */
  lock(manager: EntityManager, token: string): Promise<DecisionSession | null> {
    return manager
      .createQueryBuilder(DecisionSession, 's')
      .where('s.token = :token', { token })
      .setLock('pessimistic_write')
      .getOne();
  }

  /** In-flight sessions past their time, locked and skipped by other replicas doing the same. */
  lockOverdue(manager: EntityManager, now: Date, limit: number): Promise<DecisionSession[]> {
    return manager
      .createQueryBuilder(DecisionSession, 's')
      .where('s.status IN (:...statuses)', { statuses: [...IN_FLIGHT_STATUSES] })
      .andWhere('s.expires_at <= :now', { now })
      .orderBy('s.expires_at', 'ASC')
      .limit(limit)
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getMany();
  }

  insert(session: DecisionSession, manager: EntityManager = this.sessions.manager): Promise<unknown> {
    return manager.insert(DecisionSession, session as QueryDeepPartialEntity<DecisionSession>);
  }

  save(manager: EntityManager, session: DecisionSession): Promise<DecisionSession> {
    return manager.save(DecisionSession, session);
  }

  latestCode(manager: EntityManager, sessionToken: string): Promise<SignInCode | null> {
    return manager.findOne(SignInCode, { where: { sessionToken }, order: { createdAt: 'DESC' } });
  }

  countCodesSince(sessionToken: string, since: Date): Promise<number> {
    return this.codes
      .createQueryBuilder('c')
      .where('c.session_token = :sessionToken', { sessionToken })
      .andWhere('c.created_at > :since', { since })
      .getCount();
  }

  insertCode(code: SignInCode): Promise<unknown> {
    return this.codes.insert(code);
  }

  saveCode(manager: EntityManager, code: SignInCode): Promise<SignInCode> {
    return manager.save(SignInCode, code);
  }

  /** Sign-in codes of sessions that ended long ago are of no further use. */
  deleteCodesBefore(before: Date): Promise<unknown> {
    return this.codes.delete({ createdAt: LessThan(before) });
  }
}
