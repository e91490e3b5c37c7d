/**
 * ISO/IEC TS 27560 consent receipts, version `service-cr/2.13`, as plain TypeScript: the JSON Schema
 * and its validator, the builder (a frozen decision-time record plus a projection of its lifecycle),
 * the canonical, DPV JSON-LD and signed export flavors, and the offline verifier of signed receipts.
 */
export * from './schema';
export * from './builder';
export * from './flavors';
export * from './verify';
