import { INT_MAX, INT_MIN, isValidId } from '../definition/validate-record';
import type { ValidationIssue } from '../errors';
import { isValidDate, normalizeDateTime } from '../time';
import type { AttributeDef } from './attribute-def';

const MAX_VARCHAR = 255;
const MAX_TEXT = 10_000_000;
const MAX_LINKS = 10_000;

export type ValueCheck = { ok: true; value: unknown } | { ok: false; code: string; message: string };

const fail = (code: string, message: string): ValueCheck => ({ ok: false, code, message });
const ok = (value: unknown): ValueCheck => ({ ok: true, value });

function checkNumber(a: AttributeDef, value: unknown): ValueCheck {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fail('invalid_type', `must be a ${a.type === 'int' ? 'whole number' : 'number'}`);
  if (a.type === 'int' && (!Number.isInteger(value) || value < INT_MIN || value > INT_MAX)) return fail('invalid_type', `must be a whole number from ${INT_MIN} to ${INT_MAX}`);
  if (a.min !== null && value < a.min) return fail('too_small', `must be at least ${a.min}`);
  if (a.max !== null && value > a.max) return fail('too_big', `must be at most ${a.max}`);
  return ok(value);
}

/** Characters of a text as fields count them (code points: an emoji is one, not two UTF-16 units). */
function characters(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

function checkText(value: unknown, max: number): ValueCheck {
  if (typeof value !== 'string') return fail('invalid_type', 'must be a string');
  // A text no longer than `max` UTF-16 units has at most `max` characters: counted only past it.
  if (value.length > max && characters(value) > max) return fail('too_long', `must be at most ${max} characters`);
  return ok(value);
}

function checkList(a: AttributeDef, value: unknown): ValueCheck {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) return fail('invalid_type', 'must be an array of strings');
  if (a.type === 'linkMultiple') {
    if (value.length > MAX_LINKS) return fail('too_big', `must hold at most ${MAX_LINKS} ids`);
    const bad = value.find((v) => !isValidId(v));
    if (bad !== undefined) return fail('invalid_format', `'${bad}' is not an id`);
    // No links is stored as no value, so that isNotLinked / isNull find it.
    return ok(value.length ? [...new Set(value)] : null);
  }
  if (new Set(value).size !== value.length) return fail('not_unique', 'must not repeat a value');
  const stray = value.find((v) => !(a.options ?? []).includes(v));
  if (stray !== undefined) return fail('invalid_enum_value', `'${stray}' is not one of: ${(a.options ?? []).join(', ')}`);
  return ok(value);
}

/** Checks a value against its attribute's type and returns it normalized (date-times in UTC). Null is always allowed here. */
export function checkValue(a: AttributeDef, value: unknown): ValueCheck {
  if (value === null) return ok(null);
  switch (a.type) {
    case 'varchar':
      return checkText(value, MAX_VARCHAR);
    case 'text':
      return checkText(value, MAX_TEXT);
    case 'int':
    case 'float':
      return checkNumber(a, value);
    case 'bool':
      return typeof value === 'boolean' ? ok(value) : fail('invalid_type', 'must be true or false');
    case 'date':
      return typeof value === 'string' && isValidDate(value) ? ok(value) : fail('invalid_format', 'must be a date YYYY-MM-DD');
    case 'datetime': {
      const normalized = typeof value === 'string' ? normalizeDateTime(value) : undefined;
      return normalized ? ok(normalized) : fail('invalid_format', 'must be a date-time YYYY-MM-DD HH:MM:SS (UTC) or ISO 8601');
    }
    case 'enum':
      return typeof value === 'string' && (a.options ?? []).includes(value)
        ? ok(value)
        : fail('invalid_enum_value', `must be one of: ${(a.options ?? []).join(', ')}`);
    case 'link':
      return isValidId(value) ? ok(value) : fail('invalid_format', 'must be a record id');
    case 'multiEnum':
    case 'linkMultiple':
      return checkList(a, value);
  }
}

/** A value a required attribute may not hold. */
export const isEmptyValue = (value: unknown): boolean =>
  value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);

/** One issue of a 400 answer about an attribute value. */
export function valueIssue(path: (string | number)[], check: Extract<ValueCheck, { ok: false }>): ValidationIssue {
  return { path, code: check.code, message: `${path.join('.')} ${check.message}` };
}
