import { Controller, DynamicModule, Inject, Injectable, Module, Type } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { DomainError } from '@dcr/domain';
import { concat, concatMap, from, map, Observable, of, throwError, timer } from 'rxjs';
import { Type as TransformTo } from 'class-transformer';
import { IsString, MinLength, ValidateNested } from 'class-validator';
import { TransportContext } from '../transport-context';

/** Everything the contract's handlers observed, shared by all test microservices of one suite. */
@Injectable()
export class ContractLog {
  readonly requests: Array<{ instance: string; id: string }> = [];
  readonly events: Array<{ instance: string; service: string; id: string; requestId?: string }> = [];
  readonly startedSlowRequests: string[] = [];
  readonly finishedSlowRequests: string[] = [];

  eventIds(service: string): string[] {
    return this.events.filter((entry) => entry.service === service).map((entry) => entry.id).sort();
  }
}

/** Which test microservice a handler runs in: `service` is its queue group, `instance` the replica. */
export class ContractIdentity {
  constructor(
    readonly service: string,
    readonly instance: string,
  ) {}
}

export class AddressDto {
  @IsString()
  @MinLength(2)
  street: string;
}

export class RegisterDto {
  @IsString()
  @MinLength(2)
  name: string;

  @ValidateNested()
  @TransformTo(() => AddressDto)
  address: AddressDto;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Request handlers, mounted only on the "alpha" service so that each request has one queue group. */
@Controller()
export class ContractRequestController {
  constructor(
    @Inject(ContractIdentity) private readonly identity: ContractIdentity,
    @Inject(ContractLog) private readonly log: ContractLog,
  ) {}

  @MessagePattern('contract.echo')
  echo(@Payload() data: Record<string, unknown>, @Ctx() context: TransportContext) {
    // Mutating what arrived must not reach the caller's object: the message was copied through JSON.
    data.touchedByHandler = true;
    return {
      received: data,
      subject: context.getSubject(),
      instance: this.identity.instance,
      requestId: context.getHeader('X-Request-Id') ?? null,
    };
  }

  /** A reply of `bytes` characters: larger than the bus takes when asked to be. */
  @MessagePattern('contract.inflate')
  inflate(@Payload() data: { bytes: number }) {
    return 'x'.repeat(data.bytes);
  }

  @MessagePattern('contract.count')
  count(@Payload() data: { id: string }) {
    this.log.requests.push({ instance: this.identity.instance, id: data.id });
    return this.identity.instance;
  }

  @MessagePattern('contract.wrong_country')
  wrongCountry(): never {
    throw new DomainError(
      'wrong_country',
      'This resource is served from its home country DE',
      [{ field: 'subject', reason: 'recorded in another country' }],
      { home_country: 'DE' },
    );
  }

  @MessagePattern('contract.crash')
  crash(): never {
    throw new Error('secret connection string postgres://admin:hunter2@db');
  }

  @MessagePattern('contract.register')
  register(@Payload() dto: RegisterDto) {
    return { isDto: dto instanceof RegisterDto, isNestedDto: dto.address instanceof AddressDto, name: dto.name };
  }

  @MessagePattern('contract.slow')
  async slow(@Payload() data: { id: string }) {
    this.log.startedSlowRequests.push(data.id);
    await sleep(300);
    this.log.finishedSlowRequests.push(data.id);
    return 'late';
  }

  @MessagePattern('contract.void')
  nothing(): void {}

  /** A stream: the reply is its last value, sent once the stream completes. */
  @MessagePattern('contract.stream')
  stream(): Observable<string> {
    return from(['first', 'second', 'last']).pipe(concatMap((value) => timer(5).pipe(map(() => value))));
  }

  /** A stream that fails after a value: the failure is the reply. */
  @MessagePattern('contract.stream_fails')
  failingStream(): Observable<string> {
    return concat(of('partial'), throwError(() => new DomainError('conflict', 'The stream failed after a value')));
  }
}

/**
 * Event handlers, mounted on every service: each service must get its own copy of an event.
 * `@EventPattern<string>(...)` picks Nest's untyped overload; the typed one (inferred for a bare
 * string) would refuse a handler whose second parameter is a typed `@Ctx()`.
 */
@Controller()
export class ContractEventController {
  constructor(
    @Inject(ContractIdentity) private readonly identity: ContractIdentity,
    @Inject(ContractLog) private readonly log: ContractLog,
  ) {}

  @EventPattern<string>('contract.happened')
  happened(@Payload() data: { id: string }, @Ctx() context: TransportContext) {
    const { service, instance } = this.identity;
    this.log.events.push({ service, instance, id: data.id, requestId: context.getHeader('x-request-id') });
  }

  @EventPattern<string>('contract.explodes')
  explodes(): never {
    throw new Error('event handler failure');
  }
}

@Module({})
export class ContractModule {
  static for(identity: ContractIdentity, log: ContractLog, controllers: Type[]): DynamicModule {
    return {
      module: ContractModule,
      controllers,
      providers: [
        { provide: ContractIdentity, useValue: identity },
        { provide: ContractLog, useValue: log },
      ],
    };
  }
}
