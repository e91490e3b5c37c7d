import { ConfiguredParty } from '@dcr/receipts';

/**
 * The catalogued supervisory authority of each home country, named on receipts as a party. A
 * country missing here gets none on its receipts (absence is meaningful: none is guessed).
 */
export const SUPERVISORY_AUTHORITIES: Readonly<Record<string, ConfiguredParty>> = {
  DE: {
    id: 'sa:de:bfdi',
    name: 'Der Bundesbeauftragte für den Datenschutz und die Informationsfreiheit',
    url: 'https://www.bfdi.bund.de',
  },
  US: {
    id: 'sa:us:ftc',
    name: 'Federal Trade Commission',
    url: 'https://www.ftc.gov',
  },
};
