import { checkServiceSchema } from '@dcr/testing';
import { receiptsService } from '../src/receipts.service';

describe('receipts schema', () => {
  it('matches its entities after its migrations, and reverts cleanly', async () => {
    const check = await checkServiceSchema(receiptsService);
    expect(check.applied).toHaveLength(receiptsService.migrations.length);
    expect(check.pendingAfterMigrations).toEqual([]);
    expect(check.tablesAfterRevert).toEqual([]);
  });
});
