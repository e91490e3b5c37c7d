import { checkServiceSchema } from '@dcr/testing';
import { auditChainService } from '../src/audit-chain.service';

describe('audit-chain schema', () => {
  it('matches its entities after its migrations, and reverts cleanly', async () => {
    const check = await checkServiceSchema(auditChainService);
    expect(check.applied).toHaveLength(auditChainService.migrations.length);
    expect(check.pendingAfterMigrations).toEqual([]);
    expect(check.tablesAfterRevert).toEqual([]);
  });
});
