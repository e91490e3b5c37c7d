export * from './residency-router.service';
