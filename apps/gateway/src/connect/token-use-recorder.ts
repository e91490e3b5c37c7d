import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { ConnectRepository } from './connect.repository';

/**
 * Remembers when each API token was last used and writes those times in batches, so that
 * authenticating a request never waits on a database write.
 */
@Injectable()
export class TokenUseRecorder implements OnApplicationShutdown {
  private readonly logger = new Logger(TokenUseRecorder.name);
  private pending = new Map<string, number>();

  constructor(private readonly repository: ConnectRepository) {}

  record(tokenId: string): void {
    this.pending.set(tokenId, Date.now());
  }

  @Interval(2000)
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.repository.recordTokenUses(new Map([...batch].map(([id, at]) => [id, new Date(at)])));
    } catch (error) {
      this.logger.warn(`could not record token use: ${String(error)}`);
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }
}
