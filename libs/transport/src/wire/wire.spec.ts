import { normalizeHeaders } from './headers';
import { assertPrefix, queueGroupFor, subjectFor } from './subjects';

describe('subjects', () => {
  it('puts the country prefix first and the service in the queue group', () => {
    expect(subjectFor('us', 'residency.locate')).toBe('us.residency.locate');
    expect(queueGroupFor('de', 'residency-router')).toBe('de.residency-router');
  });

  it('refuses wildcards, empty tokens, object patterns and multi-token prefixes', () => {
    for (const pattern of ['residency.*', 'residency.>', 'a..b', '', '{"cmd":"x"}', 'a b']) {
      expect(() => subjectFor('us', pattern)).toThrow(TypeError);
    }
    expect(assertPrefix('staging.us')).toBe('staging.us');
    expect(() => assertPrefix('a.b.us')).toThrow(TypeError);
    expect(() => assertPrefix('.us')).toThrow(TypeError);
    expect(() => assertPrefix('US')).toThrow(TypeError);
  });
});

describe('normalizeHeaders', () => {
  it('lower-cases names, later sources winning, and drops empty values', () => {
    expect(normalizeHeaders({ 'X-Request-Id': 'a', 'x-skip': undefined }, { 'x-request-id': 'b', 'X-N': 1 })).toEqual({
      'x-request-id': 'b',
      'x-n': '1',
    });
  });

  it('refuses names and values NATS headers cannot carry', () => {
    expect(() => normalizeHeaders({ 'bad name': 'x' })).toThrow(TypeError);
    expect(() => normalizeHeaders({ 'x-ok': 'line\r\nbreak' })).toThrow(TypeError);
  });
});
