import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import {
  DirectoryConfirmReply,
  DirectoryConfirmRequest,
  DirectoryEntryMessage,
  DirectoryPullReply,
  DirectoryPullRequest,
  DirectoryReleaseEvent,
  DirectorySyncEvent,
  RESIDENCY_DIRECTORY_CONFIRM,
  RESIDENCY_DIRECTORY_RELEASE,
  RESIDENCY_DIRECTORY_PULL,
  RESIDENCY_DIRECTORY_SYNC,
} from '@dcr/contracts';
import { ResidencyRouterEnvironment } from '@dcr/config';
import { claimPrecedes, DomainError } from '@dcr/domain';
import { CallBatcher } from '@dcr/persistence';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { TransportRecord } from '@dcr/transport';
import { firstValueFrom } from 'rxjs';
import { DirectoryPerson, DirectoryRepository, PeerEntry } from './directory.repository';

const toMessage = (entry: PeerEntry): DirectoryEntryMessage => ({
  reference: entry.reference.trim(),
  home_country: entry.homeCountry,
  status: entry.status as DirectoryEntryMessage['status'],
  recorded_at: entry.recordedAt.toISOString(),
});

/** The most entries one sync event or confirmation carries (the contract's limit). */
const SYNC_MAX_ENTRIES = 1000;
/** How long a peer that did not confirm is not asked again (its entries go as sync events meanwhile). */
const UNANSWERING_PAUSE_MS = 10_000;
/**
 * How many confirmation timeouts (DIRECTORY_CONFIRM_TIMEOUT_MS) after its claim an entry homed here
 * may still be waiting for its peers' confirmation (a claim of up to 2,000 references asks each peer
 * in two messages, one after the other), so that a registration finding it confirms it again
 * (settleFoundClaims).
 */
const FOUND_CLAIM_UNSETTLED_TIMEOUTS = 3;
/** Entries per page of a start's catch-up with a peer (`directory.pull`; the contract's limit). */
const PULL_PAGE = 1000;

const fromMessage = (entry: DirectoryEntryMessage) => ({ reference: entry.reference, homeCountry: entry.home_country, status: entry.status, recordedAt: new Date(entry.recorded_at) });

/** Whether claim `a` precedes claim `b` by the directory's rule (libs/domain `claimPrecedes`). */
const claimsBefore = (a: DirectoryEntryMessage, b: DirectoryEntryMessage): boolean => claimPrecedes(fromMessage(a), fromMessage(b));

@Injectable()
export class DirectoryService implements OnApplicationBootstrap {
  private readonly logger = new Logger(DirectoryService.name);
  /** Peers whose confirmation failed, until when they are not asked (`confirmWith`). */
  private readonly unanswering = new Map<string, number>();

  constructor(
    private readonly directory: DirectoryRepository,
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /** At start, in the background: what each peer homed while this country was down (`catchUp`). */
  onApplicationBootstrap(): void {
    void this.catchUp();
  }

  /**
   * Pulls from every peer the entries homed there (`residency-router.directory.pull`, a page at a
   * time) and merges them as if they had come as sync events: the events a peer sent while this
   * country was down are lost, and nothing else sends them again. A peer that is not up skips it;
   * it pulls from here when it starts. Only each peer's own claims are taken (the rest come from
   * their own homes).
   */
  async catchUp(pageSize = PULL_PAGE): Promise<void> {
    await Promise.all(
      this.clients.peerCountries().map(async (peer) => {
        let after: string | undefined;
        let merged = 0;
        try {
          do {
            const request: DirectoryPullRequest = { ...(after ? { after } : {}), limit: pageSize };
            const reply = await firstValueFrom(this.clients.peer(peer).send<DirectoryPullReply, DirectoryPullRequest>(RESIDENCY_DIRECTORY_PULL, request));
            const theirs = reply.entries.filter((entry) => entry.home_country === peer);
            this.warnIfTaken(await this.directory.mergeFromPeer(theirs.map(fromMessage), this.context.env.COUNTRY), peer);
            merged += theirs.length;
            after = reply.next ?? undefined;
          } while (after);
          if (merged > 0) this.logger.log(`directory caught up with ${peer}: ${merged} entries homed there merged`);
        } catch (error) {
          this.logger.log(`directory catch-up with ${peer} skipped (${String(error)}); it pulls from here when it starts`);
        }
      }),
    );
  }

  /** `residency-router.directory.pull` from a peer: a page of the entries homed here. */
  async homedHere(request: DirectoryPullRequest): Promise<DirectoryPullReply> {
    const entries = await this.directory.homedIn(this.context.env.COUNTRY, request.after ?? '', request.limit);
    return { entries: entries.map(toMessage), next: entries.length === request.limit ? entries[entries.length - 1].reference.trim() : null };
  }

  /** `locate` for many people in one statement: each person's home country, or null. Homes no one. */
  async locateMany(people: string[][]): Promise<Array<string | null>> {
    const found = await this.directory.findMany([...new Set(people.flat())]);
    const home = new Map(found.map((entry) => [entry.reference.trim(), entry.homeCountry]));
    return people.map((references) => {
      for (const reference of references) {
        const country = home.get(reference);
        if (country) return country;
      }
      return null;
    });
  }

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
   * Homes the references in this country unless one of them already lives elsewhere or a peer
   * claimed them earlier (settleWithPeers). Only the references, the country, a status and a time travel.
   */
  async register(person: DirectoryPerson): Promise<string> {
    const [home] = await this.registerMany([person]);
    return home;
  }

  /**
   * `register` for many people in one round (DirectoryRepository.registerMany: one statement, a
   * second only for people with several references that may be known or whose reference was known
   * already), one confirmation to each peer (a thousand entries each).
   * Answers each person's home country in the order given.
   */
  async registerMany(subjects: DirectoryPerson[]): Promise<string[]> {
    const country = this.context.env.COUNTRY;
    const recordedAt = new Date();
    const { homes, inserted, split } = await this.directory.registerMany(subjects, country, recordedAt);
    // The people homed here by this call (none of their references was known): their new entries.
    const written = new Set(inserted);
    const newOf = (person: DirectoryPerson) => [...person.references, ...(person.minted ?? [])].filter((r) => written.has(r));
    const fresh = subjects.flatMap((person, i) => (homes.has(i) ? [] : [{ index: i, references: newOf(person) }]));
    // People found homed here given a reference new to the directory (an identifier a request binds
    // to them): a peer's earlier claim of it is someone else's there.
    const extended = subjects.flatMap((person, i) => (homes.get(i) === country && newOf(person).length > 0 ? [{ index: i, references: newOf(person) }] : []));
    const lost = await this.settleWithPeers(inserted, fresh, recordedAt, extended);
    // A person found homed here by one reference and elsewhere by another (an identifier a request
    // binds to them, which a peer's claim homed there meanwhile: someone there has it) is answered
    // that other country, as a peer's earlier claim of a new reference of theirs is.
    const answers = subjects.map((_, i) => lost.get(i) ?? split.get(i) ?? homes.get(i) ?? country);
    for (const [i, home] of await this.settleFoundClaims(subjects, homes)) answers[i] = home;
    return answers;
  }

  /**
   * People this call found homed here whose every entry here was claimed moments ago (within
   * FOUND_CLAIM_UNSETTLED_TIMEOUTS confirmation timeouts: another request's claim, in this replica
   * or another, whose confirmation with the peers may still be under way), confirmed with the peers
   * as this call's own claims are: a peer's earlier claim takes them there (settleWithPeers' rule),
   * and they are answered that country. Before, such a person was answered "homed here" at once and
   * their request wrote them here, while the claim it relied on went to the peer's earlier one: the
   * person was recorded in both countries. People homed here before that (any older entry here) keep
   * their home without a round trip. A person whose entry the
   * read finds homed elsewhere by now (another call met a peer's earlier claim of it after this call
   * found it here) is answered that country without asking. Answers the people taken elsewhere, by
   * index. Costs a read, and a round trip to the peers only for such a recent claim.
   */
  private async settleFoundClaims(subjects: DirectoryPerson[], homes: Map<number, string>): Promise<Map<number, string>> {
    const country = this.context.env.COUNTRY;
    const foundHere = subjects.flatMap((_, i) => (homes.get(i) === country ? [i] : []));
    if (foundHere.length === 0) return new Map();
    const env = this.context.env as Partial<ResidencyRouterEnvironment>;
    const unsettledSince = Date.now() - FOUND_CLAIM_UNSETTLED_TIMEOUTS * (env.DIRECTORY_CONFIRM_TIMEOUT_MS ?? 2000);
    const now = await this.directory.findMany([...new Set(foundHere.flatMap((i) => subjects[i].references))]);
    const here = new Map(now.filter((entry) => entry.homeCountry === country).map((entry) => [entry.reference.trim(), entry] as const));
    // Found homed here, and since taken elsewhere: another call's confirmation (this replica's or
    // another's) met a peer's earlier claim of the entry this call found, after it found it.
    const elsewhere = new Map(now.filter((entry) => entry.homeCountry !== country).map((entry) => [entry.reference.trim(), entry] as const));
    const taken = new Map<number, string>();
    for (const index of foundHere) {
      const moved = subjects[index].references.map((reference) => elsewhere.get(reference)).find((entry) => entry !== undefined);
      if (moved) taken.set(index, moved.homeCountry);
    }
    const recent = foundHere.filter((index) => !taken.has(index)).flatMap((index) => {
      const entries = subjects[index].references.flatMap((reference) => (here.has(reference) ? [here.get(reference)!] : []));
      return entries.length > 0 && entries.every((entry) => entry.recordedAt.getTime() > unsettledSince) ? [{ index, entries }] : [];
    });
    if (recent.length === 0) return taken;
    const entries = [...new Map(recent.flatMap((person) => person.entries).map((entry) => [entry.reference.trim(), toMessage(entry)])).values()];
    const answers = await Promise.all(this.clients.peerCountries().map((peer) => this.confirmWith(peer, entries)));
    const lost = await this.yieldToEarlierClaims(
      answers,
      recent.map(({ index, entries: own }) => ({ index, references: own.map((entry) => entry.reference.trim()) })),
    );
    for (const [index, home] of lost) taken.set(index, home);
    return taken;
  }

  /**
   * Homes here the people none of whose one reference is in the directory yet, with their made
   * references, confirmed with the peers (settleWithPeers); leaves everyone else alone. Answers, in the order given,
   * whether each person was homed by this call (`residency-router.claim-new`).
   */
  async claimNew(people: Array<{ reference: string; minted: string[] }>): Promise<boolean[]> {
    const country = this.context.env.COUNTRY;
    const recordedAt = new Date();
    const { homed, inserted } = await this.directory.claimNew(people, country, recordedAt);
    const claimed = new Set(homed);
    const written = new Set(inserted);
    const fresh = people.flatMap((person, i) => (claimed.has(person.reference) ? [{ index: i, references: [person.reference, ...person.minted.filter((r) => written.has(r))] }] : []));
    const lost = await this.settleWithPeers(inserted, fresh, recordedAt);
    return people.map((person, i) => claimed.has(person.reference) && !lost.has(i));
  }

  /**
   * `residency-router.release`, from this country's decisions service for identifiers of people it
   * had homed (or relied on as homed here) and did not write, which no one stored here holds: counts
   * the release of each entry, takes out those every party has now released (the claimant and every
   * registration that found them homed here and relied on them: DirectoryRepository RELY_ON and
   * COUNT_RELEASES; a party that writes the person never releases, so its entry stays; a reference
   * sent n times is the release of n parties: a request that registered a person twice), and tells
   * the peers which claims went (`directory.release`, an event: the answer does not wait for a
   * peer). Answers the references taken out.
   */
  async release(references: string[]): Promise<string[]> {
    const country = this.context.env.COUNTRY;
    const released = await this.directory.releaseClaims(references, country);
    if (released.length === 0) return [];
    this.logger.log(`${released.length} directory ${released.length === 1 ? 'entry' : 'entries'} of new people no request wrote released`);
    const entries = released.map(toMessage);
    for (let start = 0; start < entries.length; start += SYNC_MAX_ENTRIES) {
      const event: DirectoryReleaseEvent = { entries: entries.slice(start, start + SYNC_MAX_ENTRIES) };
      for (const peer of this.clients.peerCountries()) {
        this.clients
          .peer(peer)
          .emit(RESIDENCY_DIRECTORY_RELEASE, event)
          .subscribe({ error: (error) => this.logger.warn(`directory release to ${peer} failed (${String(error)}); its copies of ${event.entries.length} released claims stay`) });
      }
    }
    return released.map((entry) => entry.reference);
  }

  /** `residency-router.directory.release` from a peer: the copies held of exactly the claims it released, deleted. */
  async releaseFromPeer(event: DirectoryReleaseEvent): Promise<void> {
    await this.directory.releasePeerClaims(event.entries.map(fromMessage), this.context.env.COUNTRY);
  }

  /**
   * The entries this call inserted (`inserted`, homed here at `recordedAt`), confirmed with every
   * peer before anyone is answered as homed here (`residency-router.directory.confirm`): each peer
   * merges them by the directory's rule and answers what it holds. A person homed by the call
   * (`fresh`: by index, the references inserted for them) whose reference a peer answers as claimed
   * earlier by another country is homed there instead: all their entries here are rewritten to that
   * claim and the peers told, so no country keeps any of them apart. Answers those people's
   * country by index. An earlier claim answered for a new reference of someone homed before
   * (`extended`) stays the peer's: it is merged here and sent on like any peer's entry, so the
   * directories converge, and that person keeps their entries but is answered the peer's country
   * (yieldToEarlierClaims).
   *
   * Two countries homing the same new person at once each ask the other, and each merge keeps the
   * earlier claim (ties to the lower country code), so both answer the same claim and exactly one
   * country homes the person. A peer that does not answer (down, or the confirmation unknown to it)
   * is sent the entries as the `directory.sync` event instead and not asked again for a while: the
   * directory then converges only when the event arrives, as it did before there was a confirmation.
   * With DIRECTORY_CONFIRMATION=required the call fails instead (`service_unavailable`), and the
   * entries it inserted are taken out again, so no one is homed without every peer's answer.
   */
  private async settleWithPeers(
    inserted: string[],
    fresh: Array<{ index: number; references: string[] }>,
    recordedAt: Date,
    extended: Array<{ index: number; references: string[] }> = [],
  ): Promise<Map<number, string>> {
    const lost = new Map<number, string>();
    if (inserted.length === 0) return lost;
    const country = this.context.env.COUNTRY;
    const entries: DirectoryEntryMessage[] = inserted.map((reference) => ({ reference, home_country: country, status: 'active', recorded_at: recordedAt.toISOString() }));
    let answers: DirectoryEntryMessage[][];
    try {
      answers = await Promise.all(this.clients.peerCountries().map((peer) => this.confirmWith(peer, entries)));
    } catch (error) {
      // DIRECTORY_CONFIRMATION=required and a peer did not answer: nobody is homed by this call.
      await this.directory.withdrawClaims(inserted, country, recordedAt);
      throw error;
    }
    return this.yieldToEarlierClaims(answers, fresh, extended);
  }

  /**
   * The peers' answers to a confirmation of entries homed here: a person (`fresh`: by index, their
   * references here) whose reference a peer answers as claimed earlier by another country is homed
   * there instead (settleWithPeers). A person homed here before (`extended`: by index, the
   * references this call added for them) keeps their home and their entries, but when a peer
   * answers an earlier claim of one of those new references, the references given name someone of
   * that country as well: the person is answered that country, so the caller does not keep the
   * identifier for them (the earlier claim is merged here like any peer's entry). Answers those
   * people's country by index.
   */
  private async yieldToEarlierClaims(
    answers: DirectoryEntryMessage[][],
    fresh: Array<{ index: number; references: string[] }>,
    extended: Array<{ index: number; references: string[] }> = [],
  ): Promise<Map<number, string>> {
    const lost = new Map<number, string>();
    const country = this.context.env.COUNTRY;
    // Per reference, the earliest claim a peer holds that is not this one.
    const earlier = new Map<string, DirectoryEntryMessage>();
    for (const entry of answers.flat()) {
      if (entry.home_country === country) continue;
      const seen = earlier.get(entry.reference);
      if (!seen || claimsBefore(entry, seen)) earlier.set(entry.reference, entry);
    }
    if (earlier.size === 0) return lost;
    // The earlier claims themselves, and every entry of a person they take elsewhere rewritten to it.
    const rewritten = new Map(earlier);
    for (const person of fresh) {
      let winner: DirectoryEntryMessage | undefined;
      for (const reference of person.references) {
        const claim = earlier.get(reference);
        if (claim && (!winner || claimsBefore(claim, winner))) winner = claim;
      }
      if (!winner) continue;
      lost.set(person.index, winner.home_country);
      for (const reference of person.references) rewritten.set(reference, { ...winner, reference });
    }
    if (lost.size > 0) this.logger.log(`${lost.size} new ${lost.size === 1 ? 'person was' : 'people were'} claimed earlier by another country; homed there`);
    for (const person of extended) {
      const winner = person.references.map((reference) => earlier.get(reference)).reduce<DirectoryEntryMessage | undefined>(
        (first, claim) => (claim && (!first || claimsBefore(claim, first)) ? claim : first),
        undefined,
      );
      if (winner) lost.set(person.index, winner.home_country);
    }
    await this.directory.mergeFromPeer([...rewritten.values()].map(fromMessage));
    this.broadcast([...rewritten.values()]);
    return lost;
  }

  /**
   * `peer`'s answer. When it cannot answer (or failed to within the last UNANSWERING_PAUSE_MS):
   * nothing, after sending the sync event instead, or with DIRECTORY_CONFIRMATION=required a
   * `service_unavailable` error.
   */
  private async confirmWith(peer: string, entries: DirectoryEntryMessage[]): Promise<DirectoryEntryMessage[]> {
    const env = this.context.env as Partial<ResidencyRouterEnvironment>;
    const required = env.DIRECTORY_CONFIRMATION === 'required';
    const unconfirmed = (): DirectoryEntryMessage[] => {
      if (required) {
        throw new DomainError('service_unavailable', `The residency directory of ${peer} did not confirm a new person's home; no one new is recorded until it answers`);
      }
      this.broadcast(entries, [peer]);
      return [];
    };
    const silentUntil = this.unanswering.get(peer);
    if (silentUntil !== undefined && Date.now() < silentUntil) return unconfirmed();
    try {
      const answered: DirectoryEntryMessage[] = [];
      for (let start = 0; start < entries.length; start += SYNC_MAX_ENTRIES) {
        const request: DirectoryConfirmRequest = { entries: entries.slice(start, start + SYNC_MAX_ENTRIES) };
        const timeoutMs = env.DIRECTORY_CONFIRM_TIMEOUT_MS ?? 2000;
        const reply = await firstValueFrom(this.clients.peer(peer).send<DirectoryConfirmReply>(RESIDENCY_DIRECTORY_CONFIRM, new TransportRecord(request, { timeoutMs })));
        answered.push(...reply.entries);
      }
      this.unanswering.delete(peer);
      return answered;
    } catch (error) {
      this.unanswering.set(peer, Date.now() + UNANSWERING_PAUSE_MS);
      this.logger.warn(
        `directory confirmation from ${peer} failed (${String(error)}); ${required ? 'refusing new people' : 'sending the entries as a sync event'}, and not asking ${peer} for ${UNANSWERING_PAUSE_MS / 1000} s`,
      );
      return unconfirmed();
    }
  }

  /**
   * A peer's entries took people homed here (an earlier claim of theirs, made while the two
   * countries could not reach each other, or before the confirmation existed): whatever was
   * recorded here for them stays here, so it is said loudly.
   */
  private warnIfTaken(taken: number, by: string): void {
    if (taken === 0) return;
    this.logger.warn(
      `${taken} directory ${taken === 1 ? 'entry' : 'entries'} homed here went to an earlier claim of ${by}: anything recorded here for ${taken === 1 ? 'that person' : 'those people'} stays here and needs reconciling`,
    );
  }

  /** `residency-router.directory.confirm` from a peer: its new entries merged, and what is held for each. */
  async confirmFromPeer(entries: DirectoryEntryMessage[]): Promise<DirectoryEntryMessage[]> {
    return (await this.directory.mergeAndAnswer(entries.map(fromMessage))).map(toMessage);
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
      const entries = events.flatMap((event) => event.entries);
      this.warnIfTaken(await this.directory.mergeFromPeer(entries.map(fromMessage), this.context.env.COUNTRY), [...new Set(entries.map((entry) => entry.home_country))].join(', '));
      return events.map(() => undefined);
    },
    { maxBatch: 100, maxConcurrent: 1 },
  );

  /**
   * Tells the peers about entries by `directory.sync` events, at once, in events of at most
   * SYNC_MAX_ENTRIES (the contract's limit, which a registration of 500 people with three references
   * each would pass): the entries a peer could not confirm, and those rewritten to an earlier claim.
   */
  private broadcast(entries: DirectoryEntryMessage[], peers: string[] = this.clients.peerCountries()): void {
    for (let start = 0; start < entries.length; start += SYNC_MAX_ENTRIES) {
      const event: DirectorySyncEvent = { entries: entries.slice(start, start + SYNC_MAX_ENTRIES) };
      for (const country of peers) {
        this.clients
          .peer(country)
          .emit(RESIDENCY_DIRECTORY_SYNC, event)
          .subscribe({ error: (error) => this.logger.warn(`directory sync to ${country} failed: ${String(error)}`) });
      }
    }
  }
}
