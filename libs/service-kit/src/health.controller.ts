import { Controller, Inject, Type } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SERVICE_CONTEXT, ServiceContext } from './service-definition';

export interface HealthReply {
  service: string;
  country: string;
  database: 'ok';
}

/** `<service>.health` answers only when the service is up and its database answers. */
export function createHealthController(service: string): Type<unknown> {
  @Controller()
  class HealthController {
    constructor(
      @InjectDataSource() private readonly dataSource: DataSource,
      @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
    ) {}

    @MessagePattern(`${service}.health`)
    async health(): Promise<HealthReply> {
      await this.dataSource.query('SELECT 1');
      return { service, country: this.context.env.COUNTRY, database: 'ok' };
    }
  }
  return HealthController;
}
