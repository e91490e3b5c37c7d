import Ajv2020 from 'ajv/dist/2020';
import type { ServiceClients, ServiceContext } from '@dcr/service-kit';
import { validateReceipt } from '@dcr/receipts';
import type { DataSource } from 'typeorm';
import { ReceiptFreezer } from '../src/records/receipt-freezer';

describe('ReceiptFreezer at start', () => {
  it('compiles the receipt schema when the module starts, so no receipt batch waits for it', () => {
    const compile = jest.spyOn(Ajv2020.prototype, 'compile');
    const freezer = new ReceiptFreezer({} as DataSource, {} as ServiceClients, { env: {} } as unknown as ServiceContext);
    expect(compile).not.toHaveBeenCalled();
    freezer.onModuleInit();
    expect(compile).toHaveBeenCalledTimes(1);
    // The first receipt validated afterwards uses that compilation.
    expect(validateReceipt({}).valid).toBe(false);
    expect(compile).toHaveBeenCalledTimes(1);
    compile.mockRestore();
  });
});
