import { buildMessage, IS_EMAIL, isEmail, ValidateBy } from 'class-validator';
import { emailProblem, externalIdProblem } from '@dcr/domain';

/** validator.js's isEmail with its default options: the shape every entry point takes an address by. */
export const isEmailAddress = (value: string): boolean => isEmail(value);

/**
 * A person's e-mail address by the one rule every entry point that names a person takes it by
 * (emailProblem: what cannot be kept, then the 254-character and 64-byte limits by name, then
 * validator.js's isEmail). It refuses what cannot be kept before isEmail, which throws on an
 * unpaired surrogate (a 500). Named as IsEmail, so the edge's quick acceptance of plain addresses
 * (libs/transport) still applies: it accepts only what isEmail accepts.
 */
export const IsSubjectEmail = () =>
  ValidateBy({
    name: IS_EMAIL,
    validator: {
      validate: (value: unknown) => emailProblem(value, isEmailAddress) === undefined,
      defaultMessage: buildMessage((each, args) => `${each}$property ${emailProblem(args?.value, isEmailAddress) ?? 'must be an e-mail address'}`),
    },
  });

/** A person's external id by the one rule every entry point (and consent_status) takes it by: externalIdProblem. */
export const IsExternalId = () =>
  ValidateBy({
    name: 'isExternalId',
    validator: {
      validate: (value: unknown) => externalIdProblem(value) === undefined,
      defaultMessage: (args) => `${args?.property} ${externalIdProblem(args?.value) ?? 'is not valid'}`,
    },
  });
