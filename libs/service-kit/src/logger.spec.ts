import pino from 'pino';
import { isoTimeOncePerMillisecond } from './logger';

describe('isoTimeOncePerMillisecond', () => {
  afterEach(() => jest.useRealTimers());

  it("writes what pino's isoTime writes, formatting each millisecond once", () => {
    jest.useFakeTimers({ now: new Date('2026-11-22T18:00:00.123Z') });
    expect(isoTimeOncePerMillisecond()).toBe(pino.stdTimeFunctions.isoTime());
    expect(isoTimeOncePerMillisecond()).toBe(',"time":"2026-11-22T18:00:00.123Z"');
    const toISOString = jest.spyOn(Date.prototype, 'toISOString');
    isoTimeOncePerMillisecond();
    expect(toISOString).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(isoTimeOncePerMillisecond()).toBe(',"time":"2026-11-22T18:00:00.124Z"');
    expect(toISOString).toHaveBeenCalledTimes(1);
  });
});
