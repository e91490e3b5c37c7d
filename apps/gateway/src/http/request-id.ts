import { newRequestId } from '@dcr/domain';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** A caller's own X-Request-Id is kept when it is sane; otherwise the gateway makes one. */
export function requestIdOf(request: { headers: Record<string, string | string[] | undefined> }): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : newRequestId();
}
