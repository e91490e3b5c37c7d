import jsonld from 'jsonld';
import { DPV_NAMESPACE, DPV_RECEIPT_CONTEXT, RECEIPT_TERMS_NAMESPACE, dpvReceipt } from './dpv';
import fixture from './__fixtures__/consent-receipt.json';

const DPV = (term: string) => `${DPV_NAMESPACE}${term}`;
const DCR = (term: string) => `${RECEIPT_TERMS_NAMESPACE}${term}`;
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const XSD_DATE_TIME = 'http://www.w3.org/2001/XMLSchema#dateTime';
const RECORD = 'urn:dcr:record:rec_01J9Z8K7Q2M4N6P8R0S2T4V6X8';

type Node = Record<string, unknown>;

/** Any attempt to load a document fails the expansion: the context must be entirely inline. */
const offlineLoader = async (url: string): Promise<never> => {
  throw new Error(`documentLoader called for ${url}`);
};
// jsonld 9 options beyond @types/jsonld: `safe` fails on anything the processor would drop.
const offline = { documentLoader: offlineLoader, safe: true } as unknown as jsonld.Options.Expand;

const receipt = () => JSON.parse(JSON.stringify(fixture)) as Record<string, unknown>;

function withRecord(changes: Record<string, unknown>, events?: unknown[]): Record<string, unknown> {
  const copy = receipt();
  copy.record = { ...(copy.record as Node), ...changes };
  if (events) copy.event = events;
  return copy;
}

async function expandedRoot(doc: Record<string, unknown>): Promise<Node> {
  const expanded = (await jsonld.expand(doc as jsonld.JsonLdDocument, offline)) as Node[];
  expect(expanded).toHaveLength(1);
  return expanded[0];
}

async function nquads(doc: Record<string, unknown>): Promise<string> {
  const options = { format: 'application/n-quads', documentLoader: offlineLoader, safe: true };
  return (await jsonld.toRDF(doc as jsonld.JsonLdDocument, options as unknown as jsonld.Options.ToRdf)) as unknown as string;
}

const ids = (values: unknown) => (values as Node[]).map((value) => value['@id']);
const literals = (values: unknown) => (values as Node[]).map((value) => value['@value']);
const listItems = (values: unknown) => ((values as Node[])[0]['@list'] as Node[]);

describe('dpvReceipt', () => {
  let fetchSpy: jest.SpyInstance;
  beforeEach(() => {
    fetchSpy = jest.spyOn(globalThis, 'fetch').mockRejectedValue(new Error('no network in receipts'));
  });
  afterEach(() => {
    expect(fetchSpy).not.toHaveBeenCalled();
    fetchSpy.mockRestore();
  });

  it('says a consent withdrawn purpose by purpose is withdrawn once none of its purposes stands', async () => {
    // The fixture withdrew analytics alone: newsletter still stands.
    expect(ids((await expandedRoot(dpvReceipt(receipt())))[DPV('hasConsentStatus')])).toEqual([DPV('ConsentGiven')]);
    const both = receipt();
    const events = both.event as Array<Record<string, unknown>>;
    both.event = [...events, { ...events[events.length - 1], purpose_id: 'newsletter' }];
    expect(ids((await expandedRoot(dpvReceipt(both)))[DPV('hasConsentStatus')])).toEqual([DPV('ConsentWithdrawn')]);
  });

  it('carries its context inline: no remote context, DPV and the service namespace declared', () => {
    const doc = dpvReceipt(receipt());
    const context = doc['@context'] as Node;
    expect(typeof context).toBe('object');
    expect(context).toEqual(DPV_RECEIPT_CONTEXT);
    expect(context.dpv).toBe('https://w3id.org/dpv#');
    expect(context['@vocab']).toBe('urn:dcr:receipt#');
    expect(JSON.stringify(context)).not.toMatch(/"@import"/);
    // Each document gets its own copy, so a caller editing one cannot change the next.
    expect(context).not.toBe(dpvReceipt(receipt())['@context']);
  });

  it('expands offline into a dpv:ConsentRecord with its identifier, subject and current status', async () => {
    const root = await expandedRoot(dpvReceipt(receipt()));
    expect(root['@id']).toBe(RECORD);
    expect(root['@type']).toEqual([DPV('ConsentRecord')]);
    expect(literals(root[DPV('hasIdentifier')])).toEqual(['rec_01J9Z8K7Q2M4N6P8R0S2T4V6X8']);
    // The scoped withdrawal of one purpose leaves the record itself given.
    expect(ids(root[DPV('hasConsentStatus')])).toEqual([DPV('ConsentGiven')]);
    const [subject] = root[DPV('hasDataSubject')] as Node[];
    expect(subject['@id']).toBe('urn:dcr:principal:prn_7f3a9c2e');
    expect(subject['@type']).toEqual([DPV('DataSubject')]);
    expect(literals(root[DPV('hasJurisdiction')])).toEqual(['DE']);
    expect(literals(root[DCR('schema_version')])).toEqual(['service-cr/2.13']);
    expect(literals(root[DCR('conforms_to')])).toEqual(['ISO/IEC TS 27560:2023']);
  });

  it('maps purposes to dpv:Purpose nodes with their identifiers and frozen labels', async () => {
    const root = await expandedRoot(dpvReceipt(receipt()));
    const purposes = root[DPV('hasPurpose')] as Node[];
    expect(ids(purposes)).toEqual([`${RECORD}#purpose-newsletter`, `${RECORD}#purpose-analytics`]);
    expect(purposes[0]['@type']).toEqual([DPV('Purpose')]);
    expect(literals(purposes[0][DPV('hasIdentifier')])).toEqual(['newsletter']);
    expect(literals(purposes[0][DCR('purpose')])).toEqual(['Newsletter']);
  });

  it('maps parties by role to DPV entities and properties', async () => {
    const root = await expandedRoot(dpvReceipt(receipt()));
    const [controller] = root[DPV('hasDataController')] as Node[];
    expect(controller['@id']).toBe('urn:dcr:party:app_shop');
    expect(controller['@type']).toEqual([DPV('DataController')]);
    expect(literals(controller[DPV('hasName')])).toEqual(['Shop GmbH']);
    expect(literals(controller[DPV('hasContact')])).toEqual(['datenschutz@shop.example', '+49 30 1234567']);
    expect(literals(controller[DPV('hasAddress')])).toEqual(['Hauptstraße 1, 10115 Berlin']);
    expect((root[DPV('hasDataProcessor')] as Node[])[0]['@type']).toEqual([DPV('DataProcessor')]);
    expect((root[DPV('hasAuthority')] as Node[])[0]['@type']).toEqual([DPV('DataProtectionAuthority')]);
    expect((root[DPV('hasRecipient')] as Node[])[0]['@id']).toBe('urn:dcr:party:prt_mailer');
    expect(ids(root[DPV('hasRecipientThirdParty')])).toEqual(['urn:dcr:party:prt_mailer']);
  });

  it('maps locations, the notice and service-only fields', async () => {
    const root = await expandedRoot(dpvReceipt(receipt()));
    const [storage] = root[DPV('hasStorageCondition')] as Node[];
    expect(storage['@type']).toEqual([DPV('StorageLocation')]);
    expect(literals(storage[DPV('hasLocation')])).toEqual(['DE', 'FR']);
    expect(literals(root[DPV('hasThirdCountry')])).toEqual(['US']);
    const [notice] = root[DPV('hasNotice')] as Node[];
    expect(notice['@type']).toEqual([DPV('PrivacyNotice')]);
    expect(literals(notice[DCR('reference')])).toEqual(['ntc_4d2e81']);
    const [extensions] = root[DCR('extensions')] as Node[];
    expect(literals(extensions[DCR('collection_mechanism')])).toEqual(['checkbox']);
    expect(extensions[DCR('captured_at')]).toEqual([{ '@type': XSD_DATE_TIME, '@value': '2025-03-01T10:00:04Z' }]);
  });

  it('keeps the events in order, each with its DPV status where DPV has one', async () => {
    const root = await expandedRoot(dpvReceipt(receipt()));
    const events = listItems(root[DCR('event')]);
    expect(events.map((event) => literals(event[DCR('event_state')])[0])).toEqual([
      'notice shown',
      'consent requested',
      'consent given',
      'consent withdrawn',
    ]);
    expect(ids(events[0][DPV('hasNoticeStatus')])).toEqual([DPV('NoticeCommunicated')]);
    expect(ids(events[1][DPV('hasConsentStatus')])).toEqual([DPV('ConsentRequested')]);
    expect(ids(events[2][DPV('hasConsentStatus')])).toEqual([DPV('ConsentGiven')]);
    expect(events[2][DCR('validity_duration')]).toEqual([
      { '@type': 'http://www.w3.org/2001/XMLSchema#duration', '@value': 'P365D' },
    ]);
    expect(ids(events[3][DPV('hasConsentStatus')])).toEqual([DPV('ConsentWithdrawn')]);
    expect(ids(events[3][DPV('hasPurpose')])).toEqual([`${RECORD}#purpose-analytics`]);
    expect(events[3][DCR('event_time')]).toEqual([{ '@type': XSD_DATE_TIME, '@value': '2025-04-12T16:20:00Z' }]);
  });

  it('serialises to N-Quads offline', async () => {
    const quads = await nquads(dpvReceipt(receipt()));
    const lines = quads.trim().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        `<${RECORD}> <${RDF_TYPE}> <${DPV('ConsentRecord')}> .`,
        `<${RECORD}> <${DPV('hasConsentStatus')}> <${DPV('ConsentGiven')}> .`,
        `<${RECORD}> <${DPV('hasIdentifier')}> "rec_01J9Z8K7Q2M4N6P8R0S2T4V6X8" .`,
        `<${RECORD}> <${DPV('hasPurpose')}> <${RECORD}#purpose-newsletter> .`,
        `<${RECORD}#purpose-analytics> <${DPV('hasIdentifier')}> "analytics" .`,
        `<${RECORD}> <${DPV('hasDataController')}> <urn:dcr:party:app_shop> .`,
        `<urn:dcr:party:app_shop> <${RDF_TYPE}> <${DPV('DataController')}> .`,
        `<${RECORD}> <${DPV('hasDataSubject')}> <urn:dcr:principal:prn_7f3a9c2e> .`,
        `<${RECORD}> <${DCR('schema')}> "https://schemas.dcr.test/schemas/receipt/v2/record.json"^^<http://www.w3.org/2001/XMLSchema#anyURI> .`,
      ]),
    );
    expect(lines.some((line) => line.includes(`<${DPV('hasConsentStatus')}> <${DPV('ConsentWithdrawn')}>`))).toBe(true);
    expect(lines.some((line) => line.includes(`"2025-03-01T10:00:04Z"^^<${XSD_DATE_TIME}>`))).toBe(true);
  });

  it('gives the record the status of its latest whole-record event', async () => {
    const events = [...(fixture.event as unknown[]), { event_time: '2026-03-01T10:00:04Z', entity_id: 'dcr_platform', event_type: 'regular', event_state: 'consent expired' }];
    const root = await expandedRoot(dpvReceipt(withRecord({}, events)));
    expect(ids(root[DPV('hasConsentStatus')])).toEqual([DPV('ConsentExpired')]);

    const withdrawn = [...(fixture.event as unknown[]).slice(0, 3), { event_time: '2025-05-01T00:00:00Z', entity_id: 'prn_7f3a9c2e', event_type: 'explicit', event_state: 'consent withdrawn' }];
    const rootWithdrawn = await expandedRoot(dpvReceipt(withRecord({}, withdrawn)));
    expect(ids(rootWithdrawn[DPV('hasConsentStatus')])).toEqual([DPV('ConsentWithdrawn')]);
  });

  it('marks a re-affirmation as renewed consent', async () => {
    const events = [{ event_time: '2025-03-01T10:00:04Z', entity_id: 'prn_7f3a9c2e', event_type: 'explicit', event_state: 'consent given', record_reference: 'rec_older' }];
    const root = await expandedRoot(dpvReceipt(withRecord({}, events)));
    const [given] = listItems(root[DCR('event')]);
    expect(ids(given[DPV('hasConsentStatus')])).toEqual([DPV('ConsentGiven'), DPV('RenewedConsentGiven')]);
    expect(literals(given[DCR('record_reference')])).toEqual(['rec_older']);
  });

  it('uses the record id for the subject of an anonymous record', async () => {
    const copy = withRecord({ anonymous: true });
    delete (copy.record as Node).pii_principal_id;
    const root = await expandedRoot(dpvReceipt(copy));
    const [subject] = root[DPV('hasDataSubject')] as Node[];
    expect(subject['@type']).toEqual([DPV('DataSubject')]);
    expect(literals(subject[DPV('hasIdentifier')])).toEqual(['rec_01J9Z8K7Q2M4N6P8R0S2T4V6X8']);
    expect(root[DCR('anonymous')]).toEqual([{ '@value': true }]);
  });

  it('types authorization records in the service namespace and maps authority states there', async () => {
    const copy = withRecord({ record_type: 'authorization_record' }, [
      { event_time: '2025-03-01T10:00:00Z', entity_id: 'app_shop', event_type: 'regular', event_state: 'authority requested' },
      { event_time: '2025-03-01T10:01:00Z', entity_id: 'prn_7f3a9c2e', event_type: 'explicit', event_state: 'authority granted' },
    ]);
    copy.authority = { valid_from: '2025-03-01T10:01:00Z', withdrawal_method: 'https://consent.dcr.test/g/1/revoke', value_bounds: { currency: 'EUR', per_transaction: 5000 } };
    const root = await expandedRoot(dpvReceipt(copy));
    expect(root['@type']).toEqual([DCR('AuthorizationRecord')]);
    expect(root[DPV('hasConsentStatus')]).toBeUndefined();
    const events = listItems(root[DCR('event')]);
    expect(ids(events[1][DPV('hasStatus')])).toEqual([DCR('AuthorityGranted')]);
    const [authority] = root[DCR('authority')] as Node[];
    expect(authority[DCR('valid_from')]).toEqual([{ '@type': XSD_DATE_TIME, '@value': '2025-03-01T10:01:00Z' }]);
  });

  it('keeps an empty recipient list as an assertion (rdf:nil)', async () => {
    const copy = receipt();
    (copy.pii_processing as Node).recipient_third_parties = [];
    const quads = await nquads(dpvReceipt(copy));
    expect(quads).toContain(`<${RECORD}> <${DCR('recipient_third_parties')}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#nil> .`);
    expect(quads).not.toContain(DPV('hasRecipientThirdParty'));
  });

  it('types notice records in the service namespace', async () => {
    const root = await expandedRoot(dpvReceipt(withRecord({ record_type: 'notice_record' })));
    expect(root['@type']).toEqual([DCR('NoticeRecord')]);
  });

  it('would notice a remote context or a dropped term (the checks above are not vacuous)', async () => {
    const loader = jest.fn(offlineLoader);
    const remote = { '@context': 'https://w3id.org/dpv', purpose: 'x' } as jsonld.JsonLdDocument;
    await expect(jsonld.expand(remote, { ...offline, documentLoader: loader } as jsonld.Options.Expand)).rejects.toThrow();
    expect(loader.mock.calls[0][0]).toBe('https://w3id.org/dpv');
    const dropped = { '@context': { dpv: DPV_NAMESPACE }, 'dpv:hasPurpose': 'x', unmapped_field: 1 };
    await expect(jsonld.expand(dropped as jsonld.JsonLdDocument, offline)).rejects.toThrow();
  });

  it('leaves the receipt untouched', () => {
    const original = receipt();
    dpvReceipt(original);
    expect(original).toEqual(fixture);
  });
});
