import type { ApiRecord, MetaCategory, PresentEvent } from '@entity-records/core';

const BOOL = { type: 'boolean' };

/** `_meta.permissions`: what the caller may do with each record. */
export const PERMISSIONS_SCHEMA = {
  type: 'object',
  description: 'What the caller may do with the record (`own` rights judged on this record). `unlink` only in linked-record responses.',
  required: ['edit', 'delete', 'stream'],
  properties: { edit: BOOL, delete: BOOL, stream: BOOL, unlink: { ...BOOL, description: 'Whether the caller may remove this record from the link the response follows.' } },
};

/**
 * Whether the caller may take a listed record off the link the response follows: unlinking
 * (`DELETE /{Entity}/{id}/{link}`) is an update of that link of the record it starts from, so that
 * record must be editable by the caller, and its link field too (of every kind of link alike). A
 * `hasMany` link is held by the listed record's own single link (`Product.brand` of
 * `Brand.products`): unlinking writes the listed record too, which must be editable with that
 * field. A many-to-many pair is in the listed record's list too when its type declares the other
 * side (`Category.products` of `Product.categories`): the listed record must be editable as well.
 */
async function unlinkRule(event: PresentEvent): Promise<(record: ApiRecord) => Promise<boolean>> {
  const { ctx, access, link, repository, model } = event;
  if (!link) return async () => false;
  const source = repository(link.model.name);
  const allowed = access.field(link.model.name, link.field.name).edit && (await source.permits(ctx, 'edit', link.record));
  const field = link.field;
  if (!allowed || field.type !== 'linkMultiple') return async () => allowed;
  if (field.linkKind === 'hasMany') {
    const holding = model.fields.find((f) => f.type === 'link' && f.column === field.foreignColumn);
    if (holding && !access.field(model.name, holding.name).edit) return async () => false;
  } else {
    const { join } = field;
    const otherSide = model.fields.some((f) => f !== field && f.type === 'linkMultiple' && f.linkKind === 'manyToMany' && f.join.table === join.table && f.join.ownColumn === join.targetColumn);
    if (!otherSide) return async () => allowed;
  }
  const listed = repository(model.name);
  return (record) => listed.permits(ctx, 'edit', record);
}

/**
 * `permissions`: `edit`, `delete` and `stream` per record from the caller's roles (admins: all
 * true); `unlink` in linked-record responses. Ownership needs `createdBy` (and `assignedUser`),
 * read with the page whatever the response selects.
 */
export const permissionsCategory: MetaCategory = {
  schema: PERMISSIONS_SCHEMA,
  load: ({ model }) => ['createdBy', ...(model.field.get('assignedUser')?.type === 'link' ? ['assignedUser'] : [])],
  async provide(event) {
    const { ctx, model, records, access, kind, repository } = event;
    const repo = repository(model.name);
    const stream = access.scope(model.name).stream;
    const unlink = kind === 'linked' ? await unlinkRule(event) : undefined;
    const values = [];
    for (const record of records) {
      values.push({
        edit: await repo.permits(ctx, 'edit', record),
        delete: await repo.permits(ctx, 'delete', record),
        stream,
        ...(unlink && { unlink: await unlink(record) }),
      });
    }
    return values;
  },
};
