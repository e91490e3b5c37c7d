import fc from 'fast-check';
import { DomainError } from '../errors';
import {
  assertTransition,
  canTransition,
  DECISION_PATHS,
  DECISION_STATUSES,
  DecisionPath,
  DecisionStatus,
  decisionPathFor,
  FINAL_STATUSES,
  IN_FLIGHT_STATUSES,
  isDecisionStatus,
  isInFlight,
  isTerminal,
  nextOnPath,
  nextStatuses,
  TERMINAL_STATUSES,
} from './state-machine';

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

const status = fc.constantFrom(...DECISION_STATUSES);
const path = fc.constantFrom(...DECISION_PATHS);

/** Every status reachable from `pending` on a path, with the edges walked. */
function reachable(on: DecisionPath): Map<DecisionStatus, DecisionStatus[]> {
  const predecessors = new Map<DecisionStatus, DecisionStatus[]>([['pending', []]]);
  const queue: DecisionStatus[] = ['pending'];
  while (queue.length > 0) {
    const from = queue.shift()!;
    for (const to of nextStatuses(from, on)) {
      if (!predecessors.has(to)) {
        predecessors.set(to, []);
        queue.push(to);
      }
      predecessors.get(to)!.push(from);
    }
  }
  return predecessors;
}

describe('statuses', () => {
  it('are nine, each either in flight or terminal, never both', () => {
    expect(DECISION_STATUSES).toHaveLength(9);
    for (const s of DECISION_STATUSES) expect(isInFlight(s) !== isTerminal(s)).toBe(true);
    expect([...IN_FLIGHT_STATUSES, ...TERMINAL_STATUSES].sort()).toEqual([...DECISION_STATUSES].sort());
  });

  it('recognises only the nine values', () => {
    expect(isDecisionStatus('pending')).toBe(true);
    for (const other of ['Pending', 'done', '', null, undefined, 3, {}]) {
      expect(isDecisionStatus(other)).toBe(false);
      expect(isInFlight(other)).toBe(false);
      expect(isTerminal(other)).toBe(false);
    }
  });

  it('puts every approval on the standard path and a consent on its flow pattern', () => {
    expect(decisionPathFor('approval', 'informed')).toBe('standard');
    expect(decisionPathFor('consent', 'informed')).toBe('informed');
    expect(decisionPathFor('consent', 'standard')).toBe('standard');
    expect(decisionPathFor('consent')).toBe('standard');
  });
});

describe('nextStatuses', () => {
  it.each<[DecisionStatus, DecisionPath, DecisionStatus[]]>([
    ['pending', 'standard', ['authenticating', 'expired']],
    ['authenticating', 'standard', ['verifying', 'expired']],
    ['verifying', 'standard', ['reviewing', 'expired']],
    ['reviewing', 'standard', ['fulfilled', 'expired']],
    ['informed', 'standard', []],
    ['evidenced', 'standard', []],
    ['pending', 'informed', ['informed', 'expired']],
    ['informed', 'informed', ['evidenced', 'expired']],
    ['evidenced', 'informed', ['fulfilled', 'expired']],
    ['authenticating', 'informed', []],
    ['verifying', 'informed', []],
    ['reviewing', 'informed', []],
    ['fulfilled', 'standard', ['revoked']],
    ['fulfilled', 'informed', ['revoked']],
    ['expired', 'standard', []],
    ['revoked', 'informed', []],
  ])('%s on the %s path → %j', (from, on, expected) => {
    expect(nextStatuses(from, on)).toEqual(expected);
  });

  it('returns a fresh array each time', () => {
    const first = nextStatuses('pending', 'standard');
    first.push('revoked');
    expect(nextStatuses('pending', 'standard')).toEqual(['authenticating', 'expired']);
  });

  it('nextOnPath is the forward step, null off the path or at the end', () => {
    expect(nextOnPath('pending', 'standard')).toBe('authenticating');
    expect(nextOnPath('reviewing', 'standard')).toBe('fulfilled');
    expect(nextOnPath('evidenced', 'informed')).toBe('fulfilled');
    expect(nextOnPath('informed', 'standard')).toBeNull();
    expect(nextOnPath('fulfilled', 'informed')).toBeNull();
  });
});

describe('the transition graph (properties)', () => {
  it('random walks of legal moves stay in the graph and end terminal or in flight', () => {
    fc.assert(
      fc.property(path, fc.array(fc.nat(), { maxLength: 12 }), (on, choices) => {
        let current: DecisionStatus = 'pending';
        const visited: DecisionStatus[] = [current];
        for (const choice of choices) {
          const options = nextStatuses(current, on);
          if (options.length === 0) {
            expect(FINAL_STATUSES).toContain(current);
            break;
          }
          const to = options[choice % options.length];
          expect(() => assertTransition(current, to, on)).not.toThrow();
          expect(isDecisionStatus(to)).toBe(true);
          current = to;
          visited.push(current);
        }
        expect(isTerminal(current) || isInFlight(current)).toBe(true);
        // A walk on one path never touches the other path's in-flight statuses.
        const foreign: DecisionStatus[] = on === 'standard' ? ['informed', 'evidenced'] : ['authenticating', 'verifying', 'reviewing'];
        for (const s of visited) expect(foreign).not.toContain(s);
      }),
    );
  });

  it('says its status with the right article', () => {
    expect(refusal(() => assertTransition('authenticating', 'fulfilled', 'standard')).message).toBe('Cannot move an authenticating decision to fulfilled');
    expect(refusal(() => assertTransition('pending', 'fulfilled', 'standard')).message).toBe('Cannot move a pending decision to fulfilled');
  });

  it('refuses every pair not in nextStatuses with illegal_transition carrying the allowed list', () => {
    fc.assert(
      fc.property(status, status, path, (from, to, on) => {
        const allowed = nextStatuses(from, on);
        fc.pre(!allowed.includes(to));
        const error = refusal(() => assertTransition(from, to, on));
        expect(error.code).toBe('illegal_transition');
        expect(error.status).toBe(409);
        expect(error.message).toBe(`Cannot move ${/^[aeiou]/.test(from) ? 'an' : 'a'} ${from} decision to ${to}`);
        expect(error.extra).toEqual({ status: from, from, to, allowed });
        expect(canTransition(from, to, on)).toBe(false);
      }),
    );
  });

  it('accepts exactly the pairs in nextStatuses', () => {
    fc.assert(
      fc.property(status, status, path, (from, to, on) => {
        const legal = nextStatuses(from, on).includes(to);
        expect(canTransition(from, to, on)).toBe(legal);
        if (legal) expect(() => assertTransition(from, to, on)).not.toThrow();
      }),
    );
  });

  it('lets nothing leave expired or revoked, and fulfilled only to revoked', () => {
    fc.assert(
      fc.property(status, path, (to, on) => {
        for (const final of FINAL_STATUSES) {
          expect(nextStatuses(final, on)).toEqual([]);
          expect(refusal(() => assertTransition(final, to, on)).extra?.allowed).toEqual([]);
        }
        expect(canTransition('fulfilled', to, on)).toBe(to === 'revoked');
      }),
    );
  });

  it('reaches fulfilled only through reviewing (standard) or evidenced (informed)', () => {
    fc.assert(
      fc.property(status, path, (from, on) => {
        const viaFrom = canTransition(from, 'fulfilled', on);
        expect(viaFrom).toBe(from === (on === 'standard' ? 'reviewing' : 'evidenced'));
      }),
    );
    expect(reachable('standard').get('fulfilled')).toEqual(['reviewing']);
    expect(reachable('informed').get('fulfilled')).toEqual(['evidenced']);
  });

  it('reaches revoked only from fulfilled, and expired from every in-flight status of the path', () => {
    fc.assert(
      fc.property(status, path, (from, on) => {
        expect(canTransition(from, 'revoked', on)).toBe(from === 'fulfilled');
      }),
    );
    for (const on of DECISION_PATHS) {
      const graph = reachable(on);
      expect(graph.get('revoked')).toEqual(['fulfilled']);
      expect([...graph.get('expired')!].sort()).toEqual(
        (on === 'standard' ? ['pending', 'authenticating', 'verifying', 'reviewing'] : ['pending', 'informed', 'evidenced']).sort(),
      );
    }
  });

  it('refuses an unknown target status as validation_failed naming to', () => {
    const error = refusal(() => assertTransition('pending', 'done' as DecisionStatus, 'standard'));
    expect(error.code).toBe('validation_failed');
    expect(error.details?.map((d) => d.field)).toEqual(['to']);
  });
});
