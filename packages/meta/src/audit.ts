import type { ApiRecord, MetaCategory } from '@entity-records/core';

const PERSON = {
  type: 'object',
  required: ['id', 'name', 'isSystem'],
  properties: { id: { type: 'string' }, name: { type: 'string' }, isSystem: { type: 'boolean' } },
};
const DELEGATION = { type: 'object', required: ['actor', 'delegator'], properties: { actor: PERSON, delegator: PERSON } };

/** `_meta.audit`: who acted, for whom, when a record was created or last changed in a delegated session. */
export const AUDIT_SCHEMA = {
  type: 'object',
  description: 'Only when the record was created or last modified in a delegated session: `actor` is the admin who acted, `delegator` the user acted for.',
  properties: { createdBy: DELEGATION, modifiedBy: DELEGATION },
};

export interface Person {
  id: string;
  name: string;
  isSystem: boolean;
}

/** A user of a record's system fields; no id is the system itself (server-side work). */
function person(id: unknown, name: unknown): Person {
  if (typeof id !== 'string') return { id: 'system', name: 'System', isSystem: true };
  return { id, name: typeof name === 'string' && name !== '' ? name : id, isSystem: false };
}

function delegation(record: ApiRecord, who: 'createdBy' | 'modifiedBy') {
  const actor = record[`${who}ActorId`];
  if (typeof actor !== 'string') return undefined;
  return { actor: person(actor, record[`${who}ActorName`]), delegator: person(record[`${who}Id`], record[`${who}Name`]) };
}

/**
 * `audit`: `createdBy` and/or `modifiedBy` as `{actor, delegator}` when the creator or the last
 * modifier acted in a delegated session; absent otherwise. The actors are stored with every
 * record and read, with their names, in the page's own query.
 */
export const auditCategory: MetaCategory = {
  schema: AUDIT_SCHEMA,
  load: () => ['createdBy', 'modifiedBy', 'createdByActor', 'modifiedByActor'],
  provide: ({ records }) =>
    records.map((record) => {
      const createdBy = delegation(record, 'createdBy');
      const modifiedBy = delegation(record, 'modifiedBy');
      if (!createdBy && !modifiedBy) return undefined;
      return { ...(createdBy && { createdBy }), ...(modifiedBy && { modifiedBy }) };
    }),
};
