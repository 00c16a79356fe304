import type { Generation } from '../generations';
import { isDerivedKey } from '../definition/validate-record';
import type { EntityModel } from '../definition/normalize';
import { validationFailed } from '../errors';
import type { AttributeDef } from './attribute-def';
import { candidateNames, keyPart, planKey, WritePlan } from './write-plan';

/** Keys of a flattened body that are no attribute: read-only extras a client may send back. */
const IGNORED_KEYS = new Set(['attributesDefs', 'attributesValues']);

/** A create or update body with `Flatten-Attributes: true`, taken apart. */
export interface FlattenedBody {
  /** The record's own keys (and unknown `__` keys, which its validator refuses). */
  data: Record<string, unknown>;
  /** Keys that may name attribute virtual fields. */
  keys: string[];
  /** `__attributes`: attributes to add. */
  assign: string[];
  /** `__attributesToRemove` (where the generation takes it; else the key stays in `data` and is refused). */
  remove: string[];
}

/** `__attributes` / `__attributesToRemove`: a list of strings (400 otherwise). */
function listOf(value: unknown, name: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw validationFailed(`${name} must be an array of attribute ids`, [{ path: [name], code: 'invalid_type', message: `${name} must be an array of strings` }]);
  }
  return value as string[];
}

export function splitFlattenedBody(model: EntityModel, body: Record<string, unknown>, generation: Generation): FlattenedBody {
  const { removeKey } = generation.attributes;
  const control = new Set(removeKey ? ['__attributes', '__attributesToRemove'] : ['__attributes']);
  const split: FlattenedBody = { data: {}, keys: [], assign: listOf(body.__attributes, '__attributes'), remove: [] };
  if (removeKey) split.remove = listOf(body.__attributesToRemove, '__attributesToRemove');
  for (const [key, value] of Object.entries(body)) {
    if (IGNORED_KEYS.has(key) || control.has(key)) continue;
    const own = key === 'id' || model.byKey.has(key) || model.field.has(key) || isDerivedKey(model, key);
    if (own || key.startsWith('__')) split.data[key] = value;
    else split.keys.push(key);
  }
  return split;
}

/** The attribute ids and codes a split body may name (each key also without a known suffix). */
export function namesIn(split: FlattenedBody, languageSuffixes: readonly string[]): string[] {
  return [...new Set([...split.keys.flatMap((k) => candidateNames(k, languageSuffixes)), ...split.assign, ...split.remove])];
}

export interface PlanOptions {
  /** The attributes the body's names found. */
  found: readonly AttributeDef[];
  model: EntityModel;
  generation: Generation;
  languages: readonly { code: string; suffix: string }[];
}

/**
 * The plan of a split body, given the attributes its names found (`options.found`). A key that names no attribute
 * goes back to `data`, where the record validator refuses it (400). Bad values are 400.
 */
export function planFlattenedBody(split: FlattenedBody, body: Record<string, unknown>, options: PlanOptions): WritePlan {
  const { found, model, generation, languages } = options;
  const plan = new WritePlan();
  for (const key of split.keys) {
    const hit = found.map((a) => ({ a, part: keyPart(key, a, languages) })).find((x) => x.part !== undefined);
    if (!hit?.part) split.data[key] = body[key];
    // A single link named twice (`maker` and `makerId`) is refused, as for link fields: which one
    // won would depend on the order of the keys.
    else if (hit.part === 'value' && hit.a.type === 'link' && `${key}Id` in body) plan.issue([key], 'invalid_link_object', `send either ${key} or ${key}Id, not both`);
    else planKey(plan, { attribute: hit.a, part: hit.part, key, value: body[key] }, generation);
  }
  const byName = (name: string, byCode: boolean) => found.find((a) => a.id === name || (byCode && a.code === name));
  const unknown = (path: (string | number)[], name: string) => plan.issue(path, 'unknown_attribute', `'${name}' is not an attribute of ${model.name}`);
  split.assign.forEach((name, i) => {
    const a = byName(name, generation.attributes.byCode);
    if (a) plan.assign.set(a.id, a);
    else unknown(['__attributes', i], name);
  });
  split.remove.forEach((name, i) => {
    const a = byName(name, false);
    if (a) plan.remove.set(a.id, a);
    else unknown(['__attributesToRemove', i], name);
  });
  plan.assertValid();
  return plan;
}
