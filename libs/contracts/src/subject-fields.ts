import { ValidateBy } from 'class-validator';
import { externalIdProblem } from '@dcr/domain';

/** A person's external id by the rule every entry point takes it by (externalIdProblem: spaces around it do not count). */
export const IsExternalId = () => ValidateBy({ name: 'isExternalId', validator: { validate: (value: unknown) => externalIdProblem(value) === undefined } });
