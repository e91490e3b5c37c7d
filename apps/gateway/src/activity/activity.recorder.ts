import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { newOpaqueId } from '@dcr/domain';
import { Repository } from 'typeorm';
import { ActivityEventRecord } from './activity-event.entity';

/** Writes activity events of the edge without making the request that caused them wait. */
@Injectable()
export class ActivityRecorder {
  private readonly logger = new Logger('Activity');

  constructor(@InjectRepository(ActivityEventRecord) private readonly events: Repository<ActivityEventRecord>) {}

  record(type: string, detail: Record<string, unknown>, applicationId: string | null = null): void {
    const event = { id: newOpaqueId('act_'), type, applicationId, detail, occurredAt: new Date() };
    this.logger.log(JSON.stringify({ event: type, ...detail }));
    this.events.insert(event as never).catch((error) => this.logger.warn(`activity event not stored: ${String(error)}`));
  }

  list(type: string | undefined, limit: number): Promise<ActivityEventRecord[]> {
    return this.events.find({ where: type ? { type } : {}, order: { occurredAt: 'DESC' }, take: limit });
  }
}
