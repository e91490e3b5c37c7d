import { Controller } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import {
  ClaimNewReply,
  ClaimNewRequest,
  DirectoryConfirmReply,
  DirectoryConfirmRequest,
  DirectoryPullReply,
  DirectoryPullRequest,
  DirectoryReleaseEvent,
  DirectorySyncEvent,
  LocateManyReply,
  LocateManyRequest,
  LocateReply,
  LocateRequest,
  RegisterReply,
  RegisterRequest,
  RESIDENCY_CLAIM_NEW,
  RESIDENCY_DIRECTORY_CONFIRM,
  RESIDENCY_DIRECTORY_PULL,
  RESIDENCY_DIRECTORY_RELEASE,
  RESIDENCY_DIRECTORY_SYNC,
  RESIDENCY_LOCATE,
  RESIDENCY_LOCATE_MANY,
  RESIDENCY_REGISTER,
  RESIDENCY_REGISTER_MANY,
  RESIDENCY_RELEASE,
  RegisterManyReply,
  RegisterManyRequest,
  ReleaseReply,
  ReleaseRequest,
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

  @MessagePattern(RESIDENCY_LOCATE_MANY)
  async locateMany(@Payload() request: LocateManyRequest): Promise<LocateManyReply> {
    return { homes: await this.directory.locateMany(request.people.map((person) => person.references)) };
  }

  @MessagePattern(RESIDENCY_REGISTER_MANY)
  async registerMany(@Payload() request: RegisterManyRequest): Promise<RegisterManyReply> {
    return { home_countries: await this.directory.registerMany(request.subjects.map(toPerson)) };
  }

  @MessagePattern(RESIDENCY_CLAIM_NEW)
  async claimNew(@Payload() request: ClaimNewRequest): Promise<ClaimNewReply> {
    return { claimed: await this.directory.claimNew(request.subjects.map((person) => ({ reference: person.reference, minted: person.minted_references ?? [] }))) };
  }

  /** From this country's decisions service: the claims of new people whose write failed, released. */
  @MessagePattern(RESIDENCY_RELEASE)
  async release(@Payload() request: ReleaseRequest): Promise<ReleaseReply> {
    return { released: await this.directory.release(request.references) };
  }

  @MessagePattern(RESIDENCY_REGISTER)
  async register(@Payload() request: RegisterRequest): Promise<RegisterReply> {
    return { home_country: await this.directory.register(toPerson(request)) };
  }

  /** From a peer that has just homed people: merge their entries, answer what is held for each. */
  @MessagePattern(RESIDENCY_DIRECTORY_CONFIRM)
  async confirm(@Payload() request: DirectoryConfirmRequest): Promise<DirectoryConfirmReply> {
    return { entries: await this.directory.confirmFromPeer(request.entries) };
  }

  /** From a peer that has just started: a page of the entries homed here. */
  @MessagePattern(RESIDENCY_DIRECTORY_PULL)
  async pull(@Payload() request: DirectoryPullRequest): Promise<DirectoryPullReply> {
    return this.directory.homedHere(request);
  }

  /** From a peer: claims it released (their people's write failed there). */
  @EventPattern(RESIDENCY_DIRECTORY_RELEASE)
  async releaseFromPeer(@Payload() event: DirectoryReleaseEvent): Promise<void> {
    await this.directory.releaseFromPeer(event);
  }

  @EventPattern(RESIDENCY_DIRECTORY_SYNC)
  async sync(@Payload() event: DirectorySyncEvent): Promise<void> {
    await this.directory.applyFromPeer(event);
  }
}
