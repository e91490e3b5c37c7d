import { ErrorCode, httpStatusOf } from './error-codes';

/** One entry of a 422 answer: which field, and why it was refused. */
export interface FieldIssue {
  field: string;
  reason: string;
}

/**
 * The only error type domain code throws. It carries a code from the catalogue (never an HTTP
 * status) plus, for some codes, structured facts that the edge is allowed to show.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldIssue[],
    /** Extra top-level fields of the error body, e.g. `home_country` for `wrong_country`. */
    readonly extra?: Record<string, string | number | boolean | string[]>,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  get status(): number {
    return httpStatusOf(this.code);
  }

  toJSON(): SerializedDomainError {
    return { code: this.code, message: this.message, details: this.details, extra: this.extra };
  }

  static fromJSON(value: SerializedDomainError): DomainError {
    return new DomainError(value.code, value.message, value.details, value.extra);
  }
}

export interface SerializedDomainError {
  code: ErrorCode;
  message: string;
  details?: FieldIssue[];
  extra?: Record<string, string | number | boolean | string[]>;
}

export const notFound = (what: string) => new DomainError('not_found', `${what} was not found`);

export const validationFailed = (details: FieldIssue[], message = 'The request did not pass validation') =>
  new DomainError('validation_failed', message, details);

export const wrongCountry = (homeCountry: string) =>
  new DomainError(
    'wrong_country',
    `This resource is served from its home country ${homeCountry}; send the request to that country's endpoint`,
    undefined,
    { home_country: homeCountry },
  );
