import { Receipt, validateReceipt } from '../schema';

/** Asserts (jest) that `receipt` follows the receipt schema, showing every error when it does not. */
export function expectSchemaValid(receipt: unknown): asserts receipt is Receipt {
  expect(validateReceipt(receipt).errors).toEqual([]);
}

/** The receipt's schema errors (jest helper for negative tests). */
export function schemaErrors(receipt: unknown): Array<{ path: string; message: string }> {
  const result = validateReceipt(receipt);
  expect(result.valid).toBe(result.errors.length === 0);
  return result.errors;
}

/** Object.freeze at every depth, so a test fails on any mutation. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value as object)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
