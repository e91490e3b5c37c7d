import { Controller, Get, Header, Logger, Res } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { healthPattern } from '@dcr/contracts';
import { ServiceClients } from '@dcr/service-kit';
import type { FastifyReply } from 'fastify';
import { firstValueFrom, timeout } from 'rxjs';
import { DataSource } from 'typeorm';
import { PublicRoute } from '../auth/auth.decorators';
import { GatewayMetrics } from './gateway-metrics';

type Check = 'ok' | 'failed';

@ApiTags('Operations')
@PublicRoute()
@Controller()
export class HealthController {
  private readonly logger = new Logger(HealthController.name);
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clients: ServiceClients,
    private readonly metrics: GatewayMetrics,
  ) {}

  @Get('healthz')
  @ApiOkResponse({ description: 'The process is alive' })
  healthz() {
    return { status: 'ok' };
  }

  /** Ready when the database answers and a message makes the round trip over the transport. */
  @Get('readyz')
  @ApiOkResponse({ description: 'Database and NATS reachable; 503 otherwise' })
  async readyz(@Res({ passthrough: true }) reply: FastifyReply) {
    const [database, transport] = await Promise.all([
      this.check('database', () => this.dataSource.query('SELECT 1')),
      this.check('transport', () => firstValueFrom(this.clients.own.send(healthPattern('gateway'), {}).pipe(timeout(2000)))),
    ]);
    const ready = database === 'ok' && transport === 'ok';
    reply.status(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not_ready', checks: { database, transport } };
  }

  @Get('metrics')
  @ApiExcludeEndpoint()
  @Header('Cache-Control', 'no-store')
  async prometheus(@Res() reply: FastifyReply) {
    void reply.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }

  /**
   * 'ok' or 'failed': the reason goes to the log only. The probe's route is public (a load balancer
   * calls it), and a driver's message names internal addresses and ports.
   */
  private async check(name: string, probe: () => Promise<unknown>): Promise<Check> {
    try {
      await probe();
      return 'ok';
    } catch (error) {
      this.logger.warn(`readiness check ${name} failed: ${(error as Error)?.message ?? error}`);
      return 'failed';
    }
  }
}
