export { verifySignedReceipt } from './verify-signed-receipt';
export type { ReceiptVerification, ReceiptVerificationFailureCode, ReceiptVerificationKeys } from './verify-signed-receipt';
export { receiptJwks, receiptKeyHistoryEntry } from './published-keys';
export type { ReceiptJwks, ReceiptKeyHistory, ReceiptKeyHistoryEntry, ReceiptKeyStatus } from './published-keys';
