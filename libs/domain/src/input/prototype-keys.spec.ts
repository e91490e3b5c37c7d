import { formFieldPrototypeKeyIssues, MAX_PROTOTYPE_KEY_ISSUES, PROTOTYPE_KEY_REFUSED, prototypeKeyIssues } from './prototype-keys';

describe('prototypeKeyIssues', () => {
  it('names each __proto__ key, and each constructor holding prototype, by its path (an array\'s index in brackets, as every 4xx names a field)', () => {
    const body = JSON.parse('{"subject":{"email":"a@example.com","__proto__":{"admin":true}},"records":[{"constructor":{"prototype":{"x":1}}}],"__proto__":1}');
    expect(prototypeKeyIssues(body)).toEqual([
      { field: '__proto__', reason: PROTOTYPE_KEY_REFUSED },
      { field: 'subject.__proto__', reason: PROTOTYPE_KEY_REFUSED },
      { field: 'records[0].constructor.prototype', reason: PROTOTYPE_KEY_REFUSED },
    ]);
  });

  it('finds nothing in a value without them, a constructor without prototype included', () => {
    for (const text of ['{"constructor":"x","proto":{"prototype":1}}', '{"constructor":{"name":"x"}}', '[1,"__proto__",null]', 'null', '"__proto__"']) {
      expect([text, prototypeKeyIssues(JSON.parse(text))]).toEqual([text, []]);
    }
  });

  it('walks a value nested far deeper than any stack, and names at most a bounded number of keys', () => {
    const depth = 200_000;
    const deep = JSON.parse(`${'{"a":'.repeat(depth)}{"__proto__":{}}${'}'.repeat(depth)}`);
    const [issue] = prototypeKeyIssues(deep);
    expect(issue.field).toBe(`${'a.'.repeat(depth)}__proto__`);
    const many = JSON.parse(`[${Array.from({ length: 100 }, () => '{"__proto__":1}').join(',')}]`);
    expect(prototypeKeyIssues(many)).toHaveLength(MAX_PROTOTYPE_KEY_ISSUES);
    expect(prototypeKeyIssues(many)[1].field).toBe('[1].__proto__');
  });
});

describe('formFieldPrototypeKeyIssues', () => {
  it('names each form field that is, or in bracket or dot notation reaches, a prototype key, as the form sent it', () => {
    const names = ['email', '__proto__', 'constructor[prototype]', 'subject[__proto__][admin]', 'list.constructor.prototype', 'a[constructor][prototype]', 'x[]', 'constructor', 'prototype'];
    expect(formFieldPrototypeKeyIssues(names)).toEqual(
      ['__proto__', 'constructor[prototype]', 'subject[__proto__][admin]', 'list.constructor.prototype', 'a[constructor][prototype]'].map((field) => ({ field, reason: PROTOTYPE_KEY_REFUSED })),
    );
  });

  it('finds nothing in names that only look alike, and names at most a bounded number', () => {
    expect(formFieldPrototypeKeyIssues(['proto', '__proto', 'prototype[constructor]', 'constructors[prototype]', 'constructor[prototypes]', 'my__proto__', ''])).toEqual([]);
    const many = Array.from({ length: 50 }, (_, i) => `a${i}[__proto__]`);
    expect(formFieldPrototypeKeyIssues(many)).toHaveLength(MAX_PROTOTYPE_KEY_ISSUES);
  });
});
