/** Date-time helpers: the API speaks UTC `YYYY-MM-DD HH:MM:SS` and dates `YYYY-MM-DD`. */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export function formatDateTime(date: Date): string {
  return (
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`
  );
}

/** The second `nowDateTime` last formatted, and its text: writes of one batch ask for it a thousand times. */
let lastSecond = NaN;
let lastText = '';

export function nowDateTime(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== lastSecond) {
    lastText = formatDateTime(new Date(now));
    lastSecond = second;
  }
  return lastText;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * The start of a UTC day, for every year of four digits: `Date.UTC` reads the years 0 to 99 as
 * 1900 to 1999.
 */
function utcDay(year: number, month: number, day: number): Date {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d;
}

const DAY_MS = 86_400_000;

/** The first and last instants the API writes: the years 0001 to 9999 (the four digits of `YYYY`; no year 0). */
const FIRST_INSTANT = utcDay(1, 1, 1).getTime();
const LAST_INSTANT = utcDay(9999, 12, 31).getTime() + DAY_MS - 1000;

/** A `YYYY-MM-DD` date of the years 0001 to 9999 that the calendar has (no 2023-02-29). */
export function isValidDate(value: string): boolean {
  const m = DATE_RE.exec(value);
  if (!m || +m[1] === 0) return false;
  const d = utcDay(+m[1], +m[2], +m[3]);
  return d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3];
}

/**
 * Accepts `YYYY-MM-DD HH:MM[:SS]` (UTC) and ISO 8601 with an offset; returns the UTC form or
 * undefined when the value is not a valid date-time, or names an instant whose UTC form would
 * leave the years 0001 to 9999 (`9999-12-31T23:30:00-01:00`), which could not be written back.
 */
export function normalizeDateTime(value: string): string | undefined {
  const m = DATETIME_RE.exec(value);
  if (!m || !isValidDate(`${m[1]}-${m[2]}-${m[3]}`)) return undefined;
  const [h, min, s] = [+m[4], +m[5], +(m[6] ?? 0)];
  if (h > 23 || min > 59 || s > 59) return undefined;
  let ms = utcDay(+m[1], +m[2], +m[3]).getTime() + ((h * 60 + min) * 60 + s) * 1000;
  const zone = m[7];
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    ms -= sign * (+digits.slice(0, 2) * 60 + +digits.slice(2)) * 60_000;
  }
  if (ms < FIRST_INSTANT || ms > LAST_INSTANT) return undefined;
  return formatDateTime(new Date(ms));
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone (building one is costly). Throws RangeError for an unknown zone. */
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    if (formatters.size > 500) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** Local wall time minus UTC at an instant, in ms. Throws RangeError for an unknown zone. */
function zoneOffsetMs(timeZone: string, at: Date): number {
  const parts = formatter(timeZone).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(at.getTime() / 1000) * 1000;
}

/** The calendar date in a time zone at an instant. */
export function localDate(timeZone: string, at: Date = new Date()): string {
  const shifted = new Date(at.getTime() + zoneOffsetMs(timeZone, at));
  return formatDateTime(shifted).slice(0, 10);
}

/** Adds days to a `YYYY-MM-DD` date. */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number);
  return formatDateTime(new Date(Date.UTC(y, m - 1, d + days))).slice(0, 10);
}

/**
 * The UTC date-time at which a local calendar date starts in a time zone: the first second whose
 * local date is `date`. That is local midnight, or later where a clock change skips midnight
 * (America/Havana, America/Santiago): then the day starts at 01:00.
 */
export function startOfLocalDay(timeZone: string, date: string): string {
  const [y, m, d] = date.split('-').map(Number);
  const midnight = Date.UTC(y, m - 1, d);
  // UTC offsets lie within ±14 h, so the day starts within 15 h of midnight UTC; the local date
  // only grows with time, so a binary search over seconds finds the first second of `date`.
  let lo = midnight / 1000 - 15 * 3600; // local date before `date`
  let hi = midnight / 1000 + 15 * 3600; // local date `date` or later
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (localDate(timeZone, new Date(mid * 1000)) < date) lo = mid;
    else hi = mid;
  }
  return formatDateTime(new Date(hi * 1000));
}

export function isValidTimeZone(timeZone: string): boolean {
  if (typeof timeZone !== 'string' || timeZone === '') return false;
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}
