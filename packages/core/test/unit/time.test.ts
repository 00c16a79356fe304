import { addDays, isValidTimeZone, localDate, normalizeDateTime, startOfLocalDay } from '../../src/time';

describe('time helpers behind the relative date operators', () => {
  it.each([
    ['UTC', '2024-01-01', '2024-01-01 00:00:00'],
    ['Pacific/Kiritimati', '2024-01-01', '2023-12-31 10:00:00'],
    ['Pacific/Pago_Pago', '2024-01-01', '2024-01-01 11:00:00'],
    ['Asia/Kolkata', '2024-01-01', '2023-12-31 18:30:00'],
    // Daylight saving time starts at 02:00 and ends at 03:00: midnight is unaffected.
    ['Europe/Berlin', '2024-03-31', '2024-03-30 23:00:00'],
    ['Europe/Berlin', '2024-10-27', '2024-10-26 22:00:00'],
    // Clocks jump from 00:00 to 01:00: the day starts at 01:00 local time.
    ['America/Havana', '2020-03-08', '2020-03-08 05:00:00'],
    ['America/Santiago', '2022-09-11', '2022-09-11 04:00:00'],
    ['America/Sao_Paulo', '2018-11-04', '2018-11-04 03:00:00'],
    ['Asia/Beirut', '2020-03-29', '2020-03-28 22:00:00'],
    // Clocks fall back from 01:00 to 00:00: the day starts at the first midnight.
    ['America/Havana', '2020-11-01', '2020-11-01 04:00:00'],
  ])('the day starts in %s on %s at %s UTC', (zone, date, start) => {
    expect(startOfLocalDay(zone, date)).toBe(start);
    const instant = new Date(`${start.replace(' ', 'T')}Z`);
    expect(localDate(zone, instant)).toBe(date);
    expect(localDate(zone, new Date(instant.getTime() - 1000))).toBe(addDays(date, -1));
  });

  it('knows the local date in zones far apart', () => {
    const at = new Date('2024-06-15T10:30:00Z');
    expect(localDate('UTC', at)).toBe('2024-06-15');
    expect(localDate('Pacific/Kiritimati', at)).toBe('2024-06-16');
    expect(localDate('Pacific/Pago_Pago', at)).toBe('2024-06-14');
  });

  it('validates zones and date-times', () => {
    expect(isValidTimeZone('Europe/Berlin')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
    expect(normalizeDateTime('2024-02-21T01:00:00+01:00')).toBe('2024-02-21 00:00:00');
    expect(normalizeDateTime('2024-02-30 00:00:00')).toBeUndefined();
    expect(addDays('2024-02-28', 2)).toBe('2024-03-01');
  });
});
