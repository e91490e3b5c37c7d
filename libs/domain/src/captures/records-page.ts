/**
 * The person's records page for one organisation: the credential-free withdrawal entry of every
 * consent receipt (`withdrawal_method`) and the link of the receipt mail. The person signs in there
 * with a mailed one-time code and sees that organisation's records in this country (the page without
 * `application_id` shows every organisation's).
 */
export function recordsPageUrl(base: string, applicationId: string): string {
  return `${base.replace(/\/+$/, '')}/inbox/records?application_id=${encodeURIComponent(applicationId)}`;
}
