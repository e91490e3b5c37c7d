import { Controller } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import {
  ClaimNewReply,
  ClaimNewRequest,
  DirectorySyncEvent,
  LocateReply,
  LocateRequest,
  RegisterReply,
  RegisterRequest,
  RESIDENCY_CLAIM_NEW,
  RESIDENCY_DIRECTORY_SYNC,
  RESIDENCY_LOCATE,
  RESIDENCY_REGISTER,
  RESIDENCY_REGISTER_MANY,
  RegisterManyReply,
  RegisterManyRequest,
} from '@dcr/contracts';
import { DirectoryPerson } from './directory.repository';
import { DirectoryService } from './directory.service';

const toPerson = (request: RegisterRequest): DirectoryPerson => ({ references: request.references, minted: request.minted_references });

@Controller()
export class DirectoryController {
  constructor(private readonly directory: DirectoryService) {}

  @MessagePattern(RESIDENCY_LOCATE)
  async locate(@Payload() request: LocateRequest): Promise<LocateReply> {
    return { entry: await this.directory.locate(request.references) };
  }

  @MessagePattern(RESIDENCY_REGISTER_MANY)
  async registerMany(@Payload() request: RegisterManyRequest): Promise<RegisterManyReply> {
    return { home_countries: await this.directory.registerMany(request.subjects.map(toPerson)) };
  }

  @MessagePattern(RESIDENCY_CLAIM_NEW)
  async claimNew(@Payload() request: ClaimNewRequest): Promise<ClaimNewReply> {
    return { claimed: await this.directory.claimNew(request.subjects.map((person) => ({ reference: person.reference, minted: person.minted_references ?? [] }))) };
  }

  @MessagePattern(RESIDENCY_REGISTER)
  async register(@Payload() request: RegisterRequest): Promise<RegisterReply> {
    return { home_country: await this.directory.register(toPerson(request)) };
  }

  @EventPattern(RESIDENCY_DIRECTORY_SYNC)
  async sync(@Payload() event: DirectorySyncEvent): Promise<void> {
    await this.directory.applyFromPeer(event);
  }
}
