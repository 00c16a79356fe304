import { generationOf } from '../generations';
import type { RequestContext } from '../context';
import type { FieldModel } from '../definition/normalize';
import { ApiError, assertKnownKeys, assertStringList, joinedMessages, objectBody, validationFailed } from '../errors';
import type { Repository } from '../records/repository';
import { attributeKey, hasUnit, isMultilang, type AttributeDef } from './attribute-def';
import { groupValues, simpleItem } from './present';
import type { AttributeService } from './service';
import { WritePlan } from './write-plan';

/** The record an endpoint call addresses, with the request it comes from. */
interface RecordTarget {
  ctx: RequestContext;
  repo: Repository;
  id: string;
  /** `If-Match`: the versions the record must be at, as for an update (412 otherwise). */
  ifMatch?: string;
  /** `If-None-Match`: versions the record must not be at, as for an update (412 otherwise). */
  ifNoneMatch?: string;
}

/** Keys of a value item that are read back from GET attributeValues and ignored on write. */
const READ_KEYS = new Set(['attributeValueId', 'valueUnitName', 'valueName', 'valueNames', 'type', 'code', 'name', 'required', 'visible', 'readOnly', 'protected']);

export interface DeleteResult {
  count: number;
  errors: { attributeId: string; code: string; message: string }[];
}

/** The simple attribute endpoints of one entity type: read, assign, write and remove values. */
export class AttributeEndpoints {
  constructor(private readonly service: AttributeService) {}

  /** 404 for an entity type without attributes (the routes do not exist for it). */
  private assertHasAttributes(repo: Repository): void {
    if (!repo.model.def.hasAttributes) {
      throw new ApiError('CORE_NOT_FOUND', `${repo.model.name} has no attributes`, { details: { entity: repo.model.name } });
    }
  }

  /** `GET …/attributeValues`: every attribute the record has, with its value (needs read on the record). */
  async values({ ctx, repo, id }: RecordTarget): Promise<Record<string, unknown>[]> {
    this.assertHasAttributes(repo);
    await repo.visible(ctx, { id, fields: [repo.model.field.get('id') as FieldModel] });
    const { values, linkNames } = await this.service.loadValues(repo.env.database.knex, repo.model, { ctx, ids: [id] });
    const view = this.service.view(ctx, linkNames);
    return [...(groupValues(values).get(id)?.values() ?? [])].map((entry) => simpleItem(entry, view));
  }

  /** Attributes of the record's type named by id (generation A: or code); unknown names are 400. */
  private async resolve({ ctx, repo }: RecordTarget, names: readonly string[], pathOf: (i: number) => (string | number)[]): Promise<AttributeDef[]> {
    const { byCode } = generationOf(ctx).attributes;
    const found = await this.service.store.attributes(repo.env.database.knex, repo.model.name, names);
    const issues = names
      .map((name, i) => ({ name, i, a: found.find((a) => a.id === name || (byCode && a.code === name)) }))
      .filter((x) => !x.a)
      .map((x) => ({ path: pathOf(x.i), code: 'unknown_attribute', message: `'${x.name}' is not an attribute of ${repo.model.name}` }));
    if (issues.length) throw validationFailed(`Unknown attributes: ${joinedMessages(issues)}`, issues);
    return names.map((name) => found.find((a) => a.id === name || (byCode && a.code === name)) as AttributeDef);
  }

  /** Writes a plan as an update of the record: its rules, its transaction, its modification time. */
  private async write({ ctx, repo, id, ifMatch, ifNoneMatch }: RecordTarget, plan: WritePlan): Promise<void> {
    plan.assertValid();
    await repo.writeAttributes(ctx, { id, attributes: this.service.prepared(repo.model, { body: {}, plan }), ifMatch, ifNoneMatch });
  }

  /** `POST …/addAttributes {attributeIds}`: puts attributes on the record (with no value). */
  async add(target: RecordTarget, body: unknown): Promise<true> {
    const { ctx, repo, id } = target;
    this.assertHasAttributes(repo);
    const ids = stringList(body, 'attributeIds');
    await repo.editable(ctx, id);
    const plan = new WritePlan();
    for (const a of await this.resolve(target, ids, (i) => ['attributeIds', i])) plan.assign.set(a.id, a);
    await this.write(target, plan);
    return true;
  }

  /** `POST …/upsertAttributeValues [{attributeId, value, valueUnitId?}]`: sets values, adding attributes as needed. */
  async upsert(target: RecordTarget, body: unknown): Promise<true> {
    const { ctx, repo, id } = target;
    this.assertHasAttributes(repo);
    if (!Array.isArray(body)) throw validationFailed('The body must be an array of {attributeId, value, valueUnitId?}', [{ path: [], code: 'invalid_type', message: 'expected an array' }]);
    const items = body.map((item, i) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        throw validationFailed(`Item ${i} must be an object {attributeId, value, valueUnitId?}`, [{ path: [i], code: 'invalid_type', message: `${i} must be an object` }]);
      }
      const { attributeId } = item as { attributeId?: unknown };
      if (attributeId === undefined) throw validationFailed(`Item ${i} needs an attributeId`, [{ path: [i, 'attributeId'], code: 'required', message: `${i}.attributeId is required` }]);
      if (typeof attributeId !== 'string') throw validationFailed(`Item ${i} needs an attributeId`, [{ path: [i, 'attributeId'], code: 'invalid_type', message: `${i}.attributeId must be a string` }]);
      return item as Record<string, unknown> & { attributeId: string };
    });
    await repo.editable(ctx, id);
    const attributes = await this.resolve(target, items.map((item) => item.attributeId), (i) => [i, 'attributeId']);
    const plan = new WritePlan();
    this.planItems(plan, attributes, items);
    await this.write(target, plan);
    return true;
  }

  /** Puts each item of an upsert body into the plan, on the attribute resolved for it. */
  private planItems(plan: WritePlan, attributes: readonly AttributeDef[], items: readonly Record<string, unknown>[]): void {
    const variants = new Map(this.service.variantLanguages.map((l) => [`value${l.suffix}`, l.code]));
    items.forEach((item, i) => {
      const a = attributes[i];
      plan.assign.set(a.id, a);
      for (const [key, value] of Object.entries(item)) {
        if (key === 'attributeId' || READ_KEYS.has(key)) continue;
        if (key === 'value') plan.setValue(a, [i, 'value'], value);
        else if (key === 'valueUnitId' && hasUnit(a)) plan.setUnit(a, [i, key], value);
        else if (key === 'valueUnitId' && value === null) continue; // sent back for a type without unit
        else if (variants.has(key) && isMultilang(a)) plan.setLanguage(a, [i, key], { language: variants.get(key) as string, value });
        else plan.issue([i, key], 'unknown_field', `is not a part of attribute '${attributeKey(a)}'`);
      }
    });
  }

  /** `DELETE …/attributeValues {attributeIds}`: removes attributes; unknown or protected ones are reported, the others removed. */
  async remove(target: RecordTarget, body: unknown): Promise<DeleteResult> {
    const { ctx, repo, id } = target;
    this.assertHasAttributes(repo);
    const ids = stringList(body, 'attributeIds');
    await repo.editable(ctx, id);
    const { store } = this.service;
    const found = await store.attributes(repo.env.database.knex, repo.model.name, ids);
    const stored = new Set((await store.stored({ trx: repo.env.database.knex, model: repo.model, recordId: id }, found)).filter((r) => r.language === '').map((r) => r.attributeId));
    const result: DeleteResult = { count: 0, errors: [] };
    const plan = new WritePlan();
    for (const name of new Set(ids)) {
      const a = found.find((x) => x.id === name || (generationOf(ctx).attributes.byCode && x.code === name));
      if (!a) result.errors.push({ attributeId: name, code: 'CORE_NOT_FOUND', message: `Attribute '${name}' of ${repo.model.name} not found` });
      else if (a.isProtected && stored.has(a.id)) result.errors.push({ attributeId: name, code: 'CORE_VALIDATION_FAILED', message: `attribute '${attributeKey(a)}' is protected and cannot be removed` });
      else if (stored.has(a.id)) plan.remove.set(a.id, a);
    }
    // A removal of nothing still checks the versions the client named, as an update that changes nothing does.
    if (plan.remove.size || target.ifMatch !== undefined || target.ifNoneMatch !== undefined) await this.write(target, plan);
    result.count = plan.remove.size;
    return result;
  }
}

/** `{<name>: [ids…]}` from a body (400 otherwise, naming what is wrong). */
function stringList(body: unknown, name: string): string[] {
  const object = objectBody(body, `A body of {${name}}`);
  assertKnownKeys(object, [name], `a body of {${name}}`);
  const value = object[name];
  assertStringList(value, name, `${name} must be an array of attribute ids`);
  return value;
}
