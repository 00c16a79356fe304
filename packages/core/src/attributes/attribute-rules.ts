import { ADMIN_ONLY } from '../auth/access-control';
import { generationOf } from '../generations';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, SchemaModel } from '../definition/normalize';
import { isDerivedKey } from '../definition/validate-record';
import { joinedMessages, validationFailed, type ValidationIssue } from '../errors';
import type { HookRegistry } from '../hooks';
import { checkClashes, type AttributeLookup } from './attribute-clashes';
import { languageSuffix, MULTILANG_TYPES } from './attribute-def';

/** The rule for attribute codes (they become record keys). */
export const CODE_PATTERN = '^[a-z][a-zA-Z0-9_]*$';
const CODE_RE = new RegExp(CODE_PATTERN);

/**
 * Record keys attributes may never take: keys of every record, and the keys a flattened update
 * reads as instructions (`__attributes`, `__attributesToRemove`), which an attribute keyed by its
 * id could otherwise take, its value then unwritable and its record not to be sent back as read.
 */
const RESERVED_KEYS = new Set(['attributesDefs', 'attributesValues', '_meta', 'deleted', 'id', '__attributes', '__attributesToRemove']);
/** Set once; changing them would strand the stored values. */
const FIXED = ['entityType', 'type', 'linkEntity', 'measureId'] as const;

const UNIT_TYPES = new Set(['int', 'float']);
const ENUM_TYPES = new Set(['enum', 'multiEnum']);
const LINK_TYPES = new Set(['link', 'linkMultiple']);

/** The record keys an attribute of this code and type would add. */
function virtualKeys(code: string, type: unknown, languages: readonly string[]): string[] {
  if (type === 'link') return [`${code}Id`, `${code}Name`, code];
  if (type === 'linkMultiple') return [`${code}Ids`, `${code}Names`, code];
  return [code, `${code}UnitId`, `${code}UnitName`, ...languages.slice(1).map((l) => `${code}${languageSuffix(l)}`)];
}

const takenBy = (model: EntityModel, key: string) => RESERVED_KEYS.has(key) || model.byKey.has(key) || model.field.has(key) || isDerivedKey(model, key);

interface Checked {
  issues: ValidationIssue[];
  value(key: string): unknown;
  sent(key: string): boolean;
}

/** The instance an Attribute is checked against: its entity types and languages. */
interface AttributeRules {
  schema: SchemaModel;
  languages: readonly string[];
}

/** An Attribute create (no `existing`) or update, as the record hooks see it. */
interface AttributeWrite {
  ctx: RequestContext;
  data: Record<string, unknown>;
  existing?: ApiRecord;
}

interface CodeRules {
  /** Generation A wants a code on create and refuses to clear it on update. */
  required: boolean;
  /** A create, or an update that sends another `code`: the key may change. */
  keyed: boolean;
  languages: readonly string[];
}

/**
 * A code matches CODE_PATTERN (`''` does not); without code (absent or null, generation B) the id
 * is the key. Neither may give a key that is a field of the entity type.
 */
function checkCode(c: Checked, owner: EntityModel | undefined, { required, keyed, languages }: CodeRules): void {
  const code = c.value('code');
  if ((code === null || code === undefined) && required) {
    c.issues.push({ path: ['code'], code: 'required', message: 'code is required (generation A)' });
    return;
  }
  if (typeof code === 'string' && !CODE_RE.test(code)) {
    c.issues.push({ path: ['code'], code: 'invalid_format', message: `code must match ${CODE_PATTERN}` });
    return;
  }
  const id = c.value('id');
  const [path, key] = typeof code === 'string' ? ['code', code] : ['id', keyed && typeof id === 'string' ? id : undefined];
  if (key !== undefined && owner && virtualKeys(key, c.value('type'), languages).some((k) => takenBy(owner, k))) {
    c.issues.push({ path: [path], code: 'taken', message: `${path} '${key}' would clash with a field of ${owner.name}` });
  }
}

function checkTypeOptions(c: Checked, schema: SchemaModel): void {
  const type = c.value('type');
  const issue = (path: string, code: string, message: string) => c.issues.push({ path: [path], code, message: `${path} ${message}` });
  const options = c.value('options');
  const hasOptions = Array.isArray(options) && options.length > 0;
  if (ENUM_TYPES.has(type as string) && !hasOptions && Array.isArray(options ?? [])) issue('options', 'required', `is required for type ${String(type)}`);
  if (!ENUM_TYPES.has(type as string) && hasOptions) issue('options', 'not_allowed', 'is for enum and multiEnum attributes');
  const linkEntity = c.value('linkEntity');
  if (LINK_TYPES.has(type as string) && (typeof linkEntity !== 'string' || !schema.entity(linkEntity))) issue('linkEntity', 'invalid_entity', 'must name an entity type');
  // Their records are for admins only: a link attribute would show their names to every reader of the record.
  else if (LINK_TYPES.has(type as string) && ADMIN_ONLY.has(linkEntity as string)) issue('linkEntity', 'invalid_entity', `must not name ${String(linkEntity)}, which only admins may see`);
  if (!LINK_TYPES.has(type as string) && linkEntity) issue('linkEntity', 'not_allowed', 'is for link and linkMultiple attributes');
  // A measure may come as measureId or as a link object (`measure: {code}`), found or created later.
  if (c.value('measureId') && !UNIT_TYPES.has(type as string)) issue('measureId', 'not_allowed', 'is for int and float attributes');
  else if ((c.value('measure') ?? null) !== null && !UNIT_TYPES.has(type as string)) issue('measure', 'not_allowed', 'is for int and float attributes');
  if (c.value('isMultilang') === true && !MULTILANG_TYPES.has(type as never)) issue('isMultilang', 'not_allowed', 'is for varchar and text attributes');
  for (const bound of ['min', 'max']) if (c.value(bound) !== null && c.value(bound) !== undefined && !UNIT_TYPES.has(type as string)) issue(bound, 'not_allowed', 'is for int and float attributes');
  const [min, max] = [c.value('min'), c.value('max')];
  if (typeof min === 'number' && typeof max === 'number' && min > max) issue('min', 'too_big', `${min} is above max ${max}`);
}

/** Checks an Attribute create or update as a whole (the body merged over the stored record): 400 with every issue. */
export function checkAttribute({ schema, languages }: AttributeRules, { ctx, data, existing }: AttributeWrite): void {
  const c: Checked = {
    issues: [],
    value: (key) => (key in data ? data[key] : existing?.[key]),
    sent: (key) => key in data,
  };
  const entityType = c.value('entityType');
  const owner = typeof entityType === 'string' ? schema.entity(entityType) : undefined;
  if (typeof entityType === 'string' && !owner?.def.hasAttributes) {
    c.issues.push({ path: ['entityType'], code: 'invalid_entity', message: `entityType '${entityType}' is not an entity type with attributes` });
  }
  if (existing) {
    for (const key of FIXED) {
      if (c.sent(key) && (data[key] ?? null) !== (existing[key] ?? null)) c.issues.push({ path: [key], code: 'read_only', message: `${key} cannot be changed once the attribute exists` });
    }
    // The measure named by its link: `null`, or an object to find or create (any object, as it is
    // resolved only later in the write), changes it as measureId would.
    if (c.sent('measure') && (data.measure !== null || (existing.measureId ?? null) !== null)) {
      c.issues.push({ path: ['measure'], code: 'read_only', message: 'measure cannot be changed once the attribute exists' });
    }
  }
  // A code sent back as stored (null included, on an attribute made through /api/v1/) changes no key.
  const keyed = !existing || (c.sent('code') && (data.code ?? null) !== (existing.code ?? null));
  checkCode(c, owner, { required: generationOf(ctx).attributes.codeRequired && keyed, keyed, languages });
  checkTypeOptions(c, schema);
  if (c.issues.length) throw validationFailed(`Invalid Attribute: ${joinedMessages(c.issues)}`, c.issues);
}

/** The checks of Attribute writes, as record hooks: each write on its own, then against the other attributes of its entity type. */
export function installAttributeRules(hooks: HookRegistry, schema: SchemaModel, lookup: AttributeLookup): void {
  const rules = { schema, languages: lookup.languages };
  hooks.add('beforeCreate', 'Attribute', async ({ ctx, data }) => {
    checkAttribute(rules, { ctx, data: data ?? {} });
    await checkClashes(lookup, { data: data ?? {} });
  });
  hooks.add('beforeUpdate', 'Attribute', async ({ ctx, data, existing }) => {
    checkAttribute(rules, { ctx, data: data ?? {}, existing });
    await checkClashes(lookup, { data: data ?? {}, existing });
  });
}
