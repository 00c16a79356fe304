import type { Generation } from '../generations';
import { joinedMessages, validationFailed, type ValidationIssue } from '../errors';
import { hasUnit, isLinkType, isMultilang, type AttributeDef } from './attribute-def';
import { checkValue, isEmptyValue, valueIssue } from './values';

/** What a request writes to one attribute of a record. */
export interface ValueChange {
  attribute: AttributeDef;
  /** The body key (or endpoint path) the value came from, for error paths. */
  path: (string | number)[];
  /** The main value, when given. */
  value?: unknown;
  /** The unit, when given (null clears it). */
  unitId?: string | null;
  /** Where the unit came from (`weightUnitId`, `[i, 'valueUnitId']`), for error paths. */
  unitPath?: (string | number)[];
  /** Values of other languages, by language code. */
  languages: Map<string, unknown>;
  /** Generation A: an object to find or create and link (single links only). */
  linkObject?: Record<string, unknown>;
}

/** Everything one request writes to the attributes of one record. */
export class WritePlan {
  readonly changes = new Map<string, ValueChange>();
  readonly assign = new Map<string, AttributeDef>();
  readonly remove = new Map<string, AttributeDef>();
  readonly issues: ValidationIssue[] = [];

  get empty(): boolean {
    return this.changes.size === 0 && this.assign.size === 0 && this.remove.size === 0;
  }

  change(attribute: AttributeDef, path: (string | number)[]): ValueChange {
    let entry = this.changes.get(attribute.id);
    if (!entry) this.changes.set(attribute.id, (entry = { attribute, path, languages: new Map() }));
    return entry;
  }

  issue(path: (string | number)[], code: string, message: string): void {
    this.issues.push({ path, code, message: `${path.join('.')} ${message}` });
  }

  /** Sets the main value after checking it against the attribute's type (and `isRequired`). */
  setValue(attribute: AttributeDef, path: (string | number)[], value: unknown): void {
    const check = checkValue(attribute, value);
    if (!check.ok) return void this.issues.push(valueIssue(path, check));
    if (attribute.isRequired && isEmptyValue(check.value)) return this.issue(path, 'required', 'is required');
    this.change(attribute, path).value = check.value;
  }

  /** Sets the value of one other language after checking it against the attribute's type. */
  setLanguage(attribute: AttributeDef, path: (string | number)[], { language, value }: { language: string; value: unknown }): void {
    const check = checkValue(attribute, value);
    if (!check.ok) return void this.issues.push(valueIssue(path, check));
    this.change(attribute, path).languages.set(language, check.value);
  }

  setUnit(attribute: AttributeDef, path: (string | number)[], unitId: unknown): void {
    if (!hasUnit(attribute)) return this.issue(path, 'no_unit', `attribute '${attribute.code ?? attribute.id}' has no unit`);
    if (unitId !== null && typeof unitId !== 'string') return this.issue(path, 'invalid_type', 'must be a unit id');
    const change = this.change(attribute, path);
    change.unitId = unitId;
    change.unitPath = path;
  }

  setLinkObject(attribute: AttributeDef, path: (string | number)[], object: unknown): void {
    if (attribute.type !== 'link') return this.issue(path, 'invalid_link_object', 'only single-link attributes take an object');
    if (typeof object !== 'object' || object === null || Array.isArray(object)) return this.issue(path, 'invalid_link_object', 'a single link takes an object of fields');
    this.change(attribute, path).linkObject = object as Record<string, unknown>;
  }

  /** 400 with every issue found; also when an attribute is both written and removed. */
  assertValid(): void {
    for (const [id, a] of this.remove) {
      if (this.changes.has(id) || this.assign.has(id)) this.issue(['__attributesToRemove'], 'conflict', `attribute '${a.code ?? a.id}' is both set and removed`);
    }
    if (this.issues.length) throw validationFailed(`Invalid attribute values: ${joinedMessages(this.issues)}`, this.issues);
  }
}

/** Suffixes a body key may add to an attribute's key, with what they write. */
type Part = 'value' | 'unitId' | 'linkId' | 'linkIds' | 'derived' | { language: string };

/** What a body key means for an attribute: which part of which attribute, or nothing. */
export function keyPart(key: string, attribute: AttributeDef, languages: readonly { code: string; suffix: string }[]): Part | undefined {
  const { type } = attribute;
  const base = attribute.code ?? attribute.id;
  if (key === base) return isLinkType(type) ? (type === 'link' ? 'value' : undefined) : 'value';
  if (!key.startsWith(base)) return undefined;
  const rest = key.slice(base.length);
  if (type === 'link') return rest === 'Id' ? 'linkId' : rest === 'Name' ? 'derived' : undefined;
  if (type === 'linkMultiple') return rest === 'Ids' ? 'linkIds' : rest === 'Names' ? 'derived' : undefined;
  if (hasUnit(attribute) && rest === 'UnitId') return 'unitId';
  if (hasUnit(attribute) && rest === 'UnitName') return 'derived';
  if (isMultilang(attribute)) {
    const language = languages.find((l) => l.suffix === rest);
    if (language) return { language: language.code };
  }
  return undefined;
}

/** Names a body key might refer to: itself and itself without a known suffix. */
export function candidateNames(key: string, suffixes: readonly string[]): string[] {
  const names = [key];
  for (const s of ['UnitId', 'UnitName', 'Ids', 'Names', 'Id', 'Name', ...suffixes]) {
    if (key.length > s.length && key.endsWith(s)) names.push(key.slice(0, -s.length));
  }
  return names;
}

/** One key of a flattened body with its value, and the part of an attribute it names. */
interface BodyKey {
  attribute: AttributeDef;
  part: Part;
  key: string;
  value: unknown;
}

/**
 * Puts one virtual field of a flattened body into the plan. A link attribute's own key takes a
 * link object where the generation allows it (find-or-create) or null.
 */
export function planKey(plan: WritePlan, { attribute, part, key, value }: BodyKey, generation: Generation): void {
  if (part === 'derived') return;
  if (part === 'unitId') return plan.setUnit(attribute, [key], value);
  if (typeof part === 'object') return plan.setLanguage(attribute, [key], { language: part.language, value });
  if (part === 'value' && attribute.type === 'link') {
    if (value === null) return plan.setValue(attribute, [key], null);
    if (!generation.attributes.linkObjects) return plan.issue([key], 'invalid_link_object', `send ${key}Id; link objects in attributes are for /api/ only`);
    return plan.setLinkObject(attribute, [key], value);
  }
  plan.setValue(attribute, [key], value);
}
