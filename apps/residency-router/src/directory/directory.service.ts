import { Inject, Injectable, Logger } from '@nestjs/common';
import { DirectoryEntryMessage, DirectorySyncEvent, RESIDENCY_DIRECTORY_SYNC } from '@dcr/contracts';
import { CallBatcher } from '@dcr/persistence';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { DirectoryEntry } from './directory-entry.entity';
import { DirectoryPerson, DirectoryRepository } from './directory.repository';

const toMessage = (entry: DirectoryEntry): DirectoryEntryMessage => ({
  reference: entry.reference.trim(),
  home_country: entry.homeCountry,
  status: entry.status as DirectoryEntryMessage['status'],
  recorded_at: entry.recordedAt.toISOString(),
});

/** The most entries one sync event carries (DirectorySyncEvent's limit). */
const SYNC_MAX_ENTRIES = 1000;

@Injectable()
export class DirectoryService {
  private readonly logger = new Logger(DirectoryService.name);

  constructor(
    private readonly directory: DirectoryRepository,
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async locate(references: string[]): Promise<DirectoryEntryMessage | null> {
    const found = await this.directory.findMany(references);
    const byReference = new Map(found.map((entry) => [entry.reference.trim(), entry]));
    for (const reference of references) {
      const entry = byReference.get(reference);
      if (entry) return toMessage(entry);
    }
    return null;
  }

  /**
   * Homes the references in this country unless one of them already lives elsewhere, and tells the
   * peers. Only the references, the country and a status travel.
   */
  async register(person: DirectoryPerson): Promise<string> {
    const [home] = await this.registerMany([person]);
    return home;
  }

  /**
   * `register` for many people in one round (DirectoryRepository.registerMany: one statement, a
   * second only for people with several references that may be known or whose reference was known
   * already), one message to each peer.
   * Answers each person's home country in the order given.
   */
  async registerMany(subjects: DirectoryPerson[]): Promise<string[]> {
    const country = this.context.env.COUNTRY;
    const recordedAt = new Date();
    const { homes, inserted } = await this.directory.registerMany(subjects, country, recordedAt);
    if (inserted.length > 0) {
      this.broadcast(inserted.map((reference) => ({ reference, home_country: country, status: 'active', recorded_at: recordedAt.toISOString() })));
    }
    return subjects.map((_, i) => homes.get(i) ?? country);
  }

  /**
   * Homes here the people none of whose one reference is in the directory yet, with their made
   * references, and tells the peers; leaves everyone else alone. Answers, in the order given,
   * whether each person was homed by this call (`residency-router.claim-new`).
   */
  async claimNew(people: Array<{ reference: string; minted: string[] }>): Promise<boolean[]> {
    const country = this.context.env.COUNTRY;
    const recordedAt = new Date();
    const { homed, inserted } = await this.directory.claimNew(people, country, recordedAt);
    if (inserted.length > 0) {
      this.broadcast(inserted.map((reference) => ({ reference, home_country: country, status: 'active', recorded_at: recordedAt.toISOString() })));
    }
    const claimed = new Set(homed);
    return people.map((person) => claimed.has(person.reference));
  }

  /**
   * Entries a peer homed. The events that arrive while a merge is running are merged together in
   * the next one (one statement and one commit for them, instead of one per event: a peer sends an
   * event per Record API batch), in the order they arrived.
   */
  async applyFromPeer(event: DirectorySyncEvent): Promise<void> {
    await this.peerMerges.call(event);
  }

  private readonly peerMerges = new CallBatcher<DirectorySyncEvent, void>(
    async (events) => {
      await this.directory.mergeFromPeer(
        events.flatMap((event) =>
          event.entries.map((entry) => ({ reference: entry.reference, homeCountry: entry.home_country, status: entry.status, recordedAt: new Date(entry.recorded_at) })),
        ),
      );
      return events.map(() => undefined);
    },
    { maxBatch: 100, maxConcurrent: 1 },
  );

  /**
   * Tells the peers about entries homed here, at once (a person homed here must be known there
   * before they can be recorded there too), in events of at most SYNC_MAX_ENTRIES: the contract's
   * limit, which a registration of 500 people with three references each would pass.
   */
  private broadcast(entries: DirectoryEntryMessage[]): void {
    for (let start = 0; start < entries.length; start += SYNC_MAX_ENTRIES) {
      const event: DirectorySyncEvent = { entries: entries.slice(start, start + SYNC_MAX_ENTRIES) };
      for (const country of this.clients.peerCountries()) {
        this.clients
          .peer(country)
          .emit(RESIDENCY_DIRECTORY_SYNC, event)
          .subscribe({ error: (error) => this.logger.warn(`directory sync to ${country} failed: ${String(error)}`) });
      }
    }
  }
}
