import type { MetaCategory, PresentEvent } from '@entity-records/core';

const BOOL = { type: 'boolean' };

/** `_meta.permissions`: what the caller may do with each record. */
export const PERMISSIONS_SCHEMA = {
  type: 'object',
  description: 'What the caller may do with the record (`own` rights judged on this record). `unlink` only in linked-record responses.',
  required: ['edit', 'delete', 'stream'],
  properties: { edit: BOOL, delete: BOOL, stream: BOOL, unlink: { ...BOOL, description: 'Whether the caller may remove this record from the link the response follows.' } },
};

/**
 * Whether the caller may take each listed record off the link the response follows: what
 * `DELETE /{Entity}/{id}/{link}` would do, by that route's own rules (`Repository.permitsUnlinking`).
 */
async function unlinkable({ ctx, link, records, repository }: PresentEvent): Promise<boolean[]> {
  if (!link) return records.map(() => false);
  return repository(link.model.name).permitsUnlinking(ctx, { link: link.field.name, from: link.record, listed: records });
}

/**
 * `permissions`: `edit`, `delete` and `stream` per record from the caller's roles (admins: all
 * true); `unlink` in linked-record responses. Each says what the route would do: the stream
 * routes, like the writes, read the record first, so `stream` also needs the right to read it
 * (a create answer shows a record to a role with `read: 'no'`). Ownership needs `createdBy` (and
 * `assignedUser`), read with the page whatever the response selects.
 */
export const permissionsCategory: MetaCategory = {
  schema: PERMISSIONS_SCHEMA,
  load: ({ model }) => ['createdBy', ...(model.field.get('assignedUser')?.type === 'link' ? ['assignedUser'] : [])],
  async provide(event) {
    const { ctx, model, records, access, kind, repository } = event;
    const repo = repository(model.name);
    const stream = access.scope(model.name).stream;
    const unlink = kind === 'linked' ? await unlinkable(event) : undefined;
    const values = [];
    for (const [i, record] of records.entries()) {
      values.push({
        edit: await repo.permits(ctx, 'edit', record),
        delete: await repo.permits(ctx, 'delete', record),
        stream: stream && (await repo.permits(ctx, 'read', record)),
        ...(unlink && { unlink: unlink[i] }),
      });
    }
    return values;
  },
};
