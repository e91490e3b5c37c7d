import fc from 'fast-check';
import { DomainError } from '../errors';
import {
  isApiTokenRecordId,
  isApplicationId,
  isFlowId,
  isRegion,
  isSubjectId,
  newApiTokenRecordId,
  newApplicationId,
  newFlowId,
  newOpaqueId,
  newRequestId,
  newSubjectId,
  countryOfSubjectId,
  newEventId,
  regionOf,
} from './identifiers';

const region = fc.stringMatching(/^[a-z]{2,8}$/);

describe('generated identifiers', () => {
  it('have the documented shapes', () => {
    expect(newApplicationId('dev')).toMatch(/^tp_dev_[0-9a-z]{16}$/);
    expect(newFlowId('eu')).toMatch(/^flw_eu_[0-9a-z]{16}$/);
    expect(newApiTokenRecordId()).toMatch(/^api_token_[0-9a-z]{16}$/);
    expect(newRequestId()).toMatch(/^req_[0-9a-z]{16}$/);
    expect(newSubjectId('US')).toMatch(/^sub_us[0-9a-z]{18}$/);
    expect(newSubjectId('de')).toMatch(/^sub_de[0-9a-z]{18}$/);
    expect(newOpaqueId('dts', 24)).toMatch(/^dts_[0-9a-z]{24}$/);
    expect(newOpaqueId('anc')).toMatch(/^anc_[0-9a-z]{16}$/);
  });

  it('tolerate a prefix written with its trailing underscore', () => {
    expect(newOpaqueId('tpl_')).toMatch(/^tpl_[0-9a-z]{16}$/);
  });

  it.each(['', 'Tp', 'a-b', 'a__b', '_a', 'a b'])('refuse the prefix %j', (prefix) => {
    expect(() => newOpaqueId(prefix)).toThrow(RangeError);
  });

  it('are recognised by their own predicates and carry their region', () => {
    fc.assert(
      fc.property(region, (r) => {
        const app = newApplicationId(r);
        const flow = newFlowId(r);
        expect(isApplicationId(app)).toBe(true);
        expect(isFlowId(flow)).toBe(true);
        expect(isFlowId(app)).toBe(false);
        expect(isApplicationId(flow)).toBe(false);
        expect(regionOf(app)).toBe(r);
        expect(regionOf(flow)).toBe(r);
      }),
    );
    expect(isApiTokenRecordId(newApiTokenRecordId())).toBe(true);
    expect(isSubjectId(newSubjectId('DE'))).toBe(true);
  });

  it('do not repeat', () => {
    const ids = new Set(Array.from({ length: 5000 }, () => newApplicationId('dev')));
    expect(ids.size).toBe(5000);
  });

  it.each(['', 'd', 'DEV', 'dev1', 'de_v', 'toolongre'])('refuse the region %j with a validation error', (bad) => {
    expect(isRegion(bad)).toBe(false);
    for (const make of [newApplicationId, newFlowId]) {
      let thrown: unknown;
      try {
        make(bad);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(DomainError);
      expect((thrown as DomainError).code).toBe('validation_failed');
      expect((thrown as DomainError).details?.[0].field).toBe('region');
    }
  });
});

describe('identifier predicates', () => {
  it.each([
    'tp_dev_0123456789abcdef',
    'tp_us_zzzzzzzzzzzzzzzz',
    'tp_abcdefgh_0123456789abcdef',
  ])('accept the application id %s', (id) => expect(isApplicationId(id)).toBe(true));

  it.each([
    'tp_dev_0123456789abcde', // 15
    'tp_dev_0123456789abcdefg', // 17
    'tp_dev_0123456789ABCDEF',
    'tp_DEV_0123456789abcdef',
    'tp__0123456789abcdef',
    'tp_d_0123456789abcdef',
    ' tp_dev_0123456789abcdef',
    'tp_dev_0123456789abcdef\n',
    'flw_dev_0123456789abcdef',
    'tp_dev_0123456789abcde-',
  ])('refuse the application id %j', (id) => expect(isApplicationId(id)).toBe(false));

  it('refuse non-strings', () => {
    for (const value of [undefined, null, 42, {}, ['tp_dev_0123456789abcdef']]) {
      expect(isApplicationId(value)).toBe(false);
      expect(isFlowId(value)).toBe(false);
      expect(isApiTokenRecordId(value)).toBe(false);
      expect(isSubjectId(value)).toBe(false);
    }
  });

  it('check lengths and prefixes of the other ids', () => {
    expect(isApiTokenRecordId('api_token_0123456789abcdef')).toBe(true);
    expect(isApiTokenRecordId('api_token_0123456789abcde')).toBe(false);
    expect(isApiTokenRecordId('api_0123456789abcdef')).toBe(false);
    expect(isSubjectId('sub_0123456789abcdefghij')).toBe(true);
    expect(isSubjectId('sub_0123456789abcdef')).toBe(false);
    expect(isSubjectId('sub_0123456789abcdefghiJ')).toBe(false);
    expect(isFlowId('flw_us_0123456789abcdef')).toBe(true);
    expect(isFlowId('flw_us_0123456789abcde')).toBe(false);
  });

  it('regionOf answers only for well-formed tp_/flw_ ids', () => {
    expect(regionOf('tp_eu_0123456789abcdef')).toBe('eu');
    expect(regionOf('flw_dev_0123456789abcdef')).toBe('dev');
    expect(regionOf('dlg_dev_0123456789abcdef')).toBeUndefined();
    expect(regionOf('tp_eu_short')).toBeUndefined();
    expect(regionOf('api_token_0123456789abcdef')).toBeUndefined();
    fc.assert(
      fc.property(fc.string(), (s) => {
        const r = regionOf(s);
        if (r !== undefined) expect(isApplicationId(s) || isFlowId(s)).toBe(true);
      }),
    );
  });
});

describe('countryOfSubjectId', () => {
  it('reads the home country a new person id names, and nothing from anything else', () => {
    expect(countryOfSubjectId(newSubjectId('US'))).toBe('US');
    expect(countryOfSubjectId(newSubjectId('de'))).toBe('DE');
    // An id made before ids named their country: digits where the code would be.
    expect(countryOfSubjectId('sub_0123456789abcdefghij')).toBeUndefined();
    for (const other of ['sub_us123', `sub_US${'a'.repeat(18)}`, `dts_us${'a'.repeat(30)}`, `sub_us${'a'.repeat(19)}`, 42, undefined]) {
      expect(countryOfSubjectId(other)).toBeUndefined();
    }
  });

  it('refuses to make an id for anything but a two-letter country code', () => {
    for (const bad of ['', 'USA', 'u1', 'd']) expect(() => newSubjectId(bad)).toThrow(RangeError);
  });
});

describe('newEventId', () => {
  it('is evt_ and 20 characters that sort as the ids were made: by millisecond, then by a counter within it', () => {
    const at = Date.UTC(2026, 10, 24, 14, 0, 0);
    const ids = [newEventId(at), newEventId(at), newEventId(at), newEventId(at + 1), newEventId(at + 1), newEventId(at + 1000)];
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-z]{20}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0].slice(4, 13)).toBe(at.toString(36).padStart(9, '0'));
  });

  it('keeps sorting after the last id when the clock steps back, and past a full millisecond', () => {
    const at = Date.UTC(2027, 0, 1);
    const before = newEventId(at);
    const afterStep = newEventId(at - 5000);
    expect(afterStep > before).toBe(true);
    let last = afterStep;
    for (let i = 0; i < 36 ** 3 + 5; i++) {
      const next = newEventId(at);
      expect(next > last).toBe(true);
      last = next;
    }
    // The counter ran out within the millisecond: the ids went on from the next one.
    expect(last.slice(4, 13)).toBe((at + 1).toString(36).padStart(9, '0'));
  });
});
