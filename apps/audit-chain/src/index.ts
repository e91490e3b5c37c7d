export * from './audit-chain.service';
