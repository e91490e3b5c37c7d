import { batchesAtOnce, createServiceDataSource, DEFAULT_POOL_SIZE } from './service-data-source';

const dataSource = (poolSize?: number) =>
  createServiceDataSource({ url: 'postgres://postgres@127.0.0.1:5432/unused', schema: 'unused', entities: [], migrations: [], poolSize });

describe('batchesAtOnce', () => {
  it('leaves one pooled connection to everything else, and allows at least one batch', () => {
    expect(batchesAtOnce(dataSource(3))).toBe(2);
    expect(batchesAtOnce(dataSource(1))).toBe(1);
    expect(batchesAtOnce(dataSource())).toBe(DEFAULT_POOL_SIZE - 1);
  });
});
