export { canonicalReceipt, canonicalReceiptBytes } from './canonical';
export { DPV_NAMESPACE, DPV_RECEIPT_CONTEXT, RECEIPT_TERMS_NAMESPACE, dpvReceipt } from './dpv';
export {
  RECEIPT_JWS_TYPE,
  RECEIPT_SIGNING_ALGORITHMS,
  ReceiptKeyError,
  generateReceiptSigningKey,
  isReceiptSigningAlgorithm,
  receiptSigningKeyFromJwk,
  signReceipt,
} from './signed';
export type {
  ReceiptKeyErrorCode,
  ReceiptProtectedHeader,
  ReceiptPublicJwk,
  ReceiptSigningAlgorithm,
  ReceiptSigningKey,
  SignedReceipt,
} from './signed';
