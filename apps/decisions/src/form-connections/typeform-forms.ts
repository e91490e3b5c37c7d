import { Injectable, Logger } from '@nestjs/common';
import { DomainError, validationFailed } from '@dcr/domain';
import { FormConnectionSettings } from './form-connection-settings';

/** Typeform usually answers in well under a second; a stuck call must not hold the request. */
const TIMEOUT_MS = 10_000;
/** A form definition is configuration of some kilobytes; anything far larger is not one. */
const MAX_DEFINITION_BYTES = 2 * 1024 * 1024;

/**
 * Reads a form's definition from Typeform's Create API, `GET {FORM_BUILDER_TYPEFORM_API_URL}/forms/{form_id}`
 * with the organisation's personal access token as a bearer token
 * (https://www.typeform.com/developers/create/reference/retrieve-form/). Only ever called with a form id
 * the contract checked (alphanumerics) against the configured base URL, so a caller cannot point it
 * elsewhere.
 */
@Injectable()
export class TypeformForms {
  private readonly logger = new Logger(TypeformForms.name);

  constructor(private readonly settings: FormConnectionSettings) {}

  async definition(formId: string, personalAccessToken: string): Promise<unknown> {
    const url = `${this.settings.typeformApiUrl}/forms/${encodeURIComponent(formId)}`;
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: `Bearer ${personalAccessToken}`, accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      this.logger.warn(`Typeform API unreachable for form ${formId}: ${(error as Error).message}`);
      throw unreachable();
    }
    if (response.status === 401 || response.status === 403) {
      throw validationFailed([{ field: 'personal_access_token', reason: `Typeform refused this token (HTTP ${response.status}); it needs the forms:read scope` }]);
    }
    if (response.status === 404) {
      throw validationFailed([{ field: 'form_id', reason: 'Typeform knows no form with this id for this token' }]);
    }
    if (!response.ok) {
      this.logger.warn(`Typeform API answered HTTP ${response.status} for form ${formId}`);
      throw unreachable();
    }
    const text = await response.text();
    if (Buffer.byteLength(text, 'utf8') > MAX_DEFINITION_BYTES) throw unreachable();
    try {
      return JSON.parse(text);
    } catch {
      this.logger.warn(`Typeform API answered something that is not JSON for form ${formId}`);
      throw unreachable();
    }
  }
}

const unreachable = () =>
  new DomainError('service_unavailable', "Typeform's API could not give the form's definition; try again, or send form_definition in the request");
