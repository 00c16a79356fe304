import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { FieldDefinition } from '../declarations';
import { ApiError, unknownKeys, validationFailed, type ValidationIssue } from '../errors';
import { isValidDate, normalizeDateTime } from '../time';
import { compileOnce } from '../util/compile-once';
import type { EntityModel, FieldModel } from './normalize';

export const ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
const ID_RE = new RegExp(ID_PATTERN);
/** The range of an `int` column (32 bits) on both databases. */
export const INT_MIN = -(2 ** 31);
export const INT_MAX = 2 ** 31 - 1;

/** Keys a client may send back from a read that are not written (derived or system values). */
export function isDerivedKey(model: EntityModel, key: string): boolean {
  if (key === '_meta' || key === 'deleted') return true;
  const field = model.byKey.get(key);
  if (field?.system) return true;
  if (key.endsWith('Name') || key.endsWith('Names')) {
    const base = model.field.get(key.replace(/Names?$/, ''));
    return !!base && (base.type === 'link' || base.type === 'linkMultiple');
  }
  return false;
}

export const isValidId = (value: unknown): value is string => typeof value === 'string' && ID_RE.test(value);

/** The JSON schema of one writable value; null is allowed, `required` is checked apart. */
export function valueSchema(field: FieldModel): Record<string, unknown> {
  const def: FieldDefinition = field.def;
  const nullable = (t: string) => [t, 'null'];
  switch (field.type) {
    case 'varchar':
      return { type: nullable('string'), maxLength: def.maxLength ?? 255 };
    case 'text':
      return { type: nullable('string'), maxLength: 10_000_000 };
    case 'int':
      return { type: nullable('integer'), minimum: Math.max(def.min ?? INT_MIN, INT_MIN), maximum: Math.min(def.max ?? INT_MAX, INT_MAX) };
    case 'float':
      return { type: nullable('number'), ...(def.min !== undefined && { minimum: def.min }), ...(def.max !== undefined && { maximum: def.max }) };
    case 'bool':
      return { type: nullable('boolean') };
    case 'date':
      return { type: nullable('string'), format: 'date' };
    case 'datetime':
      return { type: nullable('string'), format: 'date-time' };
    case 'enum':
      return { enum: [...(def.options ?? []), null] };
    case 'multiEnum':
      return { type: nullable('array'), items: def.options ? { enum: [...def.options] } : { type: 'string', maxLength: 255 }, uniqueItems: true };
    case 'jsonObject':
      return { type: nullable('object') };
    case 'link':
      return { type: nullable('string'), pattern: ID_PATTERN };
    case 'linkMultiple':
      return { type: nullable('array'), items: { type: 'string', pattern: ID_PATTERN }, maxItems: 10_000 };
  }
}

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addFormat('date', { type: 'string', validate: isValidDate });
ajv.addFormat('date-time', { type: 'string', validate: (v: string) => normalizeDateTime(v) !== undefined });
const compile = compileOnce(ajv);

const ISSUE_CODES: Record<string, string> = {
  type: 'invalid_type',
  maxLength: 'too_long',
  minimum: 'too_small',
  maximum: 'too_big',
  enum: 'invalid_enum_value',
  format: 'invalid_format',
  pattern: 'invalid_format',
  uniqueItems: 'not_unique',
  maxItems: 'too_big',
};

function toIssue(error: ErrorObject): ValidationIssue {
  const path = error.instancePath.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  const allowed = error.keyword === 'enum' ? `: ${(error.params as { allowedValues: unknown[] }).allowedValues.filter((v) => v !== null).join(', ')}` : '';
  // ajv says "must be integer,null" for a nullable type.
  const message = error.keyword === 'type' ? `must be ${String((error.params as { type: unknown }).type).split(',').join(' or ')}` : error.message;
  return { path, code: ISSUE_CODES[error.keyword] ?? error.keyword, message: `${path.join('.')} ${message}${allowed}` };
}

/**
 * Whether a JSON value holds a number beyond a double's range (`1e400` parses to Infinity): stored
 * as JSON text it would read back as null, another value than the one written. Bodies are at most
 * 64 levels deep, so the walk recurses.
 */
function holdsNonFinite(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (Array.isArray(value)) return value.some(holdsNonFinite);
  if (value !== null && typeof value === 'object') return Object.values(value).some(holdsNonFinite);
  return false;
}

/** Values a create takes from `default` when the body leaves them out. */
function addDefaults(writable: readonly FieldModel[], values: Map<FieldModel, unknown>): void {
  for (const field of writable) if (!values.has(field) && field.def.default !== undefined) values.set(field, field.def.default);
}

/** The issue of a required field left empty. */
export const requiredIssue = (field: FieldModel): ValidationIssue => ({ path: [field.key], code: 'required', message: `${field.key} is required` });

/** The 400 of a record's values that break its definition (`Invalid Product: …`). */
export const invalidRecord = (model: EntityModel, issues: ValidationIssue[]): ApiError => validationFailed(`Invalid ${model.name}: ${issues.map((i) => i.message).join('; ')}`, issues);

/**
 * The issues of required fields missing (create) or cleared (both modes); `linked`: links the body
 * names by a link object (find-or-create), which give their field a value once resolved.
 */
function requiredIssues(writable: readonly FieldModel[], values: Map<FieldModel, unknown>, { mode, linked }: { mode: 'create' | 'update'; linked?: ReadonlySet<FieldModel> }): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const field of writable) {
    if (!field.def.required || field.type === 'linkMultiple' || linked?.has(field)) continue;
    const present = values.has(field);
    const value = values.get(field);
    const empty = value === null || value === '' || (Array.isArray(value) && value.length === 0);
    if ((mode === 'create' && (!present || empty)) || (mode === 'update' && present && empty)) {
      issues.push(requiredIssue(field));
    }
  }
  return issues;
}

/**
 * Turns values checked in update mode into those of a create: defaults added, required fields
 * checked (400). Saves validating a body twice when it turns out to create a record (upsert).
 */
const writableFields = new WeakMap<EntityModel, FieldModel[]>();

export function completeForCreate(model: EntityModel, values: Map<FieldModel, unknown>): Map<FieldModel, unknown> {
  let writable = writableFields.get(model);
  if (!writable) writableFields.set(model, (writable = model.fields.filter((f) => !f.system)));
  // forEach: a Map copied from its iterator makes an entry array per value.
  const complete = new Map<FieldModel, unknown>();
  values.forEach((value, field) => complete.set(field, value));
  addDefaults(writable, complete);
  const issues = requiredIssues(writable, complete, { mode: 'create' });
  if (issues.length) throw invalidRecord(model, issues);
  return complete;
}

/** One compiled validator per entity, for the writable keys. */
export interface RecordValidator {
  /**
   * Checks a create or update body and returns the values by field name, normalized
   * (date-times in UTC). Unknown keys, wrong types and missing required fields are 400; a
   * required link the body names by a link object (`linked`) is not missing.
   */
  (body: unknown, mode: 'create' | 'update', linked?: ReadonlySet<FieldModel>): Map<FieldModel, unknown>;
}

export function compileRecordValidator(model: EntityModel, extraKeys: ReadonlySet<string> = new Set()): RecordValidator {
  const writable = model.fields.filter((f) => !f.system);
  const properties = Object.fromEntries(writable.map((f) => [f.key, valueSchema(f)]));
  const validate: ValidateFunction = compile({ type: 'object', properties });

  return (body, mode, linked) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ApiError('CORE_VALIDATION_FAILED', 'The body must be a JSON object', { details: { issues: [{ path: [], code: 'invalid_type', message: 'expected an object' }] } });
    }
    const input = body as Record<string, unknown>;
    const isUnknown = (k: string) => !model.byKey.has(k) && !isDerivedKey(model, k) && !extraKeys.has(k) && !(k === 'id' && mode === 'create');
    // The keys are listed only when one is unknown: most bodies (every upsert item) have none.
    let anyUnknown = false;
    for (const k in input) if (Object.hasOwn(input, k) && isUnknown(k)) anyUnknown = true;
    if (anyUnknown) throw unknownKeys(Object.keys(input).filter(isUnknown), { noun: 'field', where: `for ${model.name}` });
    const issues: ValidationIssue[] = validate(input) ? [] : (validate.errors ?? []).map(toIssue);
    const values = new Map<FieldModel, unknown>();
    for (const field of writable) {
      if (!(field.key in input)) continue;
      let value = input[field.key];
      if (field.type === 'datetime' && typeof value === 'string') value = normalizeDateTime(value) ?? value;
      if (field.type === 'linkMultiple' && value === null) value = [];
      // A multiple link is a set: an id named twice is linked, hooked and logged once.
      else if (field.type === 'linkMultiple' && Array.isArray(value) && new Set(value).size < value.length) value = [...new Set(value)];
      // JSON's 1e400 parses to Infinity, which no column keeps (and JSON text writes as null).
      if (typeof value === 'number' && !Number.isFinite(value)) issues.push({ path: [field.key], code: 'too_big', message: `${field.key} must be a finite number` });
      else if (field.type === 'jsonObject' && holdsNonFinite(value)) issues.push({ path: [field.key], code: 'too_big', message: `${field.key} must hold finite numbers only` });
      values.set(field, value);
    }
    if (mode === 'create') addDefaults(writable, values);
    issues.push(...requiredIssues(writable, values, { mode, linked }));
    if (issues.length) throw invalidRecord(model, issues);
    return values;
  };
}
