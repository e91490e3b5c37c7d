import { DomainError } from '../errors';
import { parseTypeformDefinition } from './form-definition';

function refusedFields(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return (error as DomainError).details!.map((issue) => issue.field);
  }
  throw new Error('expected a DomainError');
}

describe('parseTypeformDefinition', () => {
  it('reads questions, groups, required flags, choices from either shape and hidden fields', () => {
    const definition = parseTypeformDefinition({
      id: 'u6nXL7',
      title: 'Sign up',
      hidden: ['crm_id'],
      theme: { href: 'https://api.typeform.com/themes/x' },
      fields: [
        { id: 'a', ref: 'email_q', type: 'email', validations: { required: true } },
        { id: 'b', ref: 'pick_q', type: 'multiple_choice', properties: { allow_multiple_selection: true, choices: [{ id: 'c1', ref: 'yes', label: 'Yes' }] } },
        { id: 'c', ref: 'group_q', type: 'group', properties: { fields: [{ id: 'd', ref: 'inner_q', type: 'yes_no' }] } },
        // The definition inside a webhook payload carries choices at the top level.
        { id: 'e', ref: 'webhook_q', type: 'dropdown', choices: [{ id: 'c2', label: 'Only a label' }] },
      ],
    });
    expect(definition).toEqual({
      id: 'u6nXL7',
      hidden: ['crm_id'],
      fields: [
        { id: 'a', ref: 'email_q', type: 'email', required: true, allow_multiple_selection: false, choices: [] },
        { id: 'b', ref: 'pick_q', type: 'multiple_choice', required: false, allow_multiple_selection: true, choices: [{ id: 'c1', ref: 'yes', label: 'Yes' }] },
        { id: 'd', ref: 'inner_q', type: 'yes_no', required: false, allow_multiple_selection: false, choices: [] },
        { id: 'c', ref: 'group_q', type: 'group', required: false, allow_multiple_selection: false, choices: [] },
        { id: 'e', ref: 'webhook_q', type: 'dropdown', required: false, allow_multiple_selection: false, choices: [{ id: 'c2', ref: null, label: 'Only a label' }] },
      ],
    });
  });

  it('refuses what the mapping could not name, by path', () => {
    expect(refusedFields(() => parseTypeformDefinition('form'))).toEqual(['form_definition']);
    expect(refusedFields(() => parseTypeformDefinition({ fields: {} }))).toEqual(['form_definition.fields']);
    expect(
      refusedFields(() =>
        parseTypeformDefinition({
          fields: [{ id: 'a', type: 'yes_no' }, { ref: 'q', type: 'yes_no' }, { ref: 'q', type: 'legal' }, { ref: 'r' }, 7],
          hidden: ['ok', 3],
        }),
      ),
    ).toEqual(['form_definition.fields[0].ref', 'form_definition.fields[2].ref', 'form_definition.fields[3].type', 'form_definition.fields[4]', 'form_definition.hidden[1]']);
  });
});
