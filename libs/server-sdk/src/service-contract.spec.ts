// The one test of this package that reads the service's own libraries: the package re-declares what
// it needs (it is installed on its own), and this keeps those copies equal to the originals.
import { ERROR_STATUS, WEBHOOK_EVENT_TYPES as SERVICE_EVENT_TYPES } from '@dcr/domain';
import { APIError, AuthenticationError, ConflictError, errorClassForStatus, ForbiddenError, GoneError, InvalidRequestError, NotFoundError, RateLimitError, WrongCountryError } from './errors';
import { WEBHOOK_EVENT_TYPES } from './resources/webhook-subscriptions';

describe('the library against the service', () => {
  it('offers exactly the webhook event types the service accepts', () => {
    expect([...WEBHOOK_EVENT_TYPES].sort()).toEqual([...SERVICE_EVENT_TYPES].sort());
  });

  it('maps every error code the service answers to the class the specification names for its status', () => {
    const expected: Record<number, unknown> = {
      400: InvalidRequestError,
      401: AuthenticationError,
      403: ForbiddenError,
      404: NotFoundError,
      408: InvalidRequestError,
      409: ConflictError,
      410: GoneError,
      413: InvalidRequestError,
      415: InvalidRequestError,
      421: WrongCountryError,
      422: InvalidRequestError,
      429: RateLimitError,
      431: InvalidRequestError,
      500: APIError,
      501: APIError,
      503: APIError,
      504: APIError,
    };
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect([code, errorClassForStatus(status)]).toEqual([code, expected[status]]);
    }
  });
});
