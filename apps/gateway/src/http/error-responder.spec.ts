import { loggableError } from './error-responder';

describe('loggableError', () => {
  it('keeps type, code, message and stack of an unexpected error, never its other properties', () => {
    const failure = Object.assign(new Error('duplicate key value violates unique constraint "UQ_x"'), {
      code: '23505',
      parameters: ['ada@example.com'],
      driverError: { detail: 'Key (email)=(ada@example.com) already exists.' },
    });
    const logged = loggableError(failure);
    expect(logged).toEqual({ type: 'Error', message: failure.message, code: '23505', stack: failure.stack });
    expect(JSON.stringify(logged)).not.toContain('ada@example.com');
    expect(loggableError('plain')).toEqual({ message: 'plain' });
  });
});
