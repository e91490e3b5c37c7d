import * as domain from '.';
import * as viaAlias from '@dcr/domain';

describe('@dcr/domain', () => {
  it('exports every concern from its root, the errors included', () => {
    for (const name of [
      'DomainError',
      'ERROR_STATUS',
      'newApplicationId',
      'newFlowId',
      'newApiTokenRecordId',
      'newRequestId',
      'newSubjectId',
      'newOpaqueId',
      'isApplicationId',
      'isFlowId',
      'isApiTokenRecordId',
      'isSubjectId',
      'countryOfSubjectId',
      'newEventId',
      'homeOfSubject',
      'regionOf',
      'generateApiToken',
      'generatePublishableKey',
      'hashCredential',
      'constantTimeEqualHex',
      'classifyBearer',
      'publishableKeyEnvironment',
      'API_TOKEN_SCOPES',
      'DEFAULT_API_TOKEN_SCOPES',
      'validateScopes',
      'parseOrigin',
      'validateAllowedOrigin',
      'originMatches',
      'TokenBucketLimiter',
      'rateLimitHeaders',
      'subjectReference',
      'isCountryCode',
      'normaliseCountry',
      'parseLimit',
      'encodeCursor',
      'decodeCursor',
    ]) {
      expect(domain).toHaveProperty(name);
    }
  });

  it('resolves through the workspace alias to the same module', () => {
    expect(viaAlias.DomainError).toBe(domain.DomainError);
  });
});
