import type { ApiRecord } from '../declarations';
import type { Connection } from '../sql/database';
import type { AttributeStore } from '../sql/attribute-store';
import { validationFailed } from '../errors';
import { attributeKey, languageSuffix, virtualFieldNames, type AttributeDef } from './attribute-def';
import type { AttributeType } from './entities';
import { candidateNames } from './write-plan';

/** Where the other attributes of an entity type are read. */
export interface AttributeLookup {
  store: AttributeStore;
  db: Connection;
  /** Instance languages, main first. */
  languages: readonly string[];
}

type Shape = Pick<AttributeDef, 'id' | 'code' | 'type' | 'measureId' | 'isMultilang'>;

/** An Attribute record (or body merged over it) as the shape its virtual fields follow; undefined while it has no key yet. */
function shapeOf(value: (key: string) => unknown): Shape | undefined {
  const code = value('code');
  const id = value('id');
  if (typeof code !== 'string' && typeof id !== 'string') return undefined;
  return {
    id: typeof id === 'string' ? id : '',
    code: typeof code === 'string' ? code : null,
    type: value('type') as AttributeType,
    measureId: (value('measureId') ?? value('measure') ?? null) as string | null,
    isMultilang: value('isMultilang') === true,
  };
}

/**
 * Refuses (400) an Attribute create or update that gives it a record key another live attribute
 * of its entity type already answers to: its key or a virtual field of either equal to one of the
 * other's (`wUnitId` next to a float `w` with a measure, `titleDeDE` next to a multilingual
 * `title`, a code equal to the id of an attribute keyed by its id). Only names the write adds are
 * checked; keys compare case-sensitively, as codes do.
 */
export async function checkClashes(lookup: AttributeLookup, write: { data: Record<string, unknown>; existing?: ApiRecord }): Promise<void> {
  const { data, existing } = write;
  const value = (key: string) => (key in data ? data[key] : existing?.[key]);
  const entityType = value('entityType');
  const after = shapeOf(value);
  if (typeof entityType !== 'string' || !after) return;
  const before = existing ? shapeOf((key) => existing[key]) : undefined;
  const had = new Set(before ? virtualFieldNames(before, lookup.languages) : []);
  const added = virtualFieldNames(after, lookup.languages).filter((name) => !had.has(name));
  if (added.length === 0) return;
  const suffixes = lookup.languages.slice(1).map(languageSuffix);
  const candidates = [...new Set(added.flatMap((name) => candidateNames(name, suffixes)))];
  // One with the same code is for the unique index to refuse (409).
  const others = (await lookup.store.attributes(lookup.db, entityType, candidates)).filter(
    (a) => a.id !== (existing?.id ?? after.id) && (a.code === null || a.code !== after.code),
  );
  for (const other of others) {
    const names = new Set(virtualFieldNames(other, lookup.languages));
    const clash = added.find((name) => names.has(name));
    if (clash === undefined) continue;
    const path = after.code === null ? 'id' : 'code';
    const message = `${path} '${attributeKey(after)}' would clash with '${clash}' of attribute '${attributeKey(other)}' of ${entityType}`;
    throw validationFailed(`Invalid Attribute: ${message}`, [{ path: [path], code: 'taken', message }]);
  }
}
