/** Identifier shapes every contract checks (the same rules as the id helpers of @dcr/domain). */
export const APPLICATION_ID = /^tp_[a-z]{2,8}_[0-9a-z]{16}$/;
export const FLOW_ID = /^flw_[a-z]{2,8}_[0-9a-z]{16}$/;
export const COUNTRY_CODE = /^[A-Z]{2}$/;
