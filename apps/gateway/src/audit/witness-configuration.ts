import { AUDIT_WITNESS_CONFIGURATION, RECEIPTS_KEYS, ReceiptKeysReply, WitnessConfigurationMessage } from '@dcr/contracts';
import { ServiceClients } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';

/** The witness configuration of the audit trail, with the receipt signing keys' history beside it. */
export async function witnessConfigurationWithReceiptKeys(clients: ServiceClients) {
  const [audit, receipts] = await Promise.all([
    firstValueFrom(clients.own.send<WitnessConfigurationMessage>(AUDIT_WITNESS_CONFIGURATION, {})),
    firstValueFrom(clients.own.send<ReceiptKeysReply>(RECEIPTS_KEYS, {})),
  ]);
  return { ...audit, receipt_keys: receipts.receipt_keys };
}
