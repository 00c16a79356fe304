import { defineEntity } from '@entity-records/core';

/** A public link to a file, with an optional expiry, usage limit and password. */
export const SharingEntity = defineEntity({
  name: 'Sharing',
  // The id is the secret of the public link: 128 random bits the hook below sets (sharing-service.ts).
  serverIds: true,
  description:
    'Public links to files. POST {fileId, name?} answers `link` (download as attachment) and `viewLink` (shown inline); both need no token. Optional `validTill`, `allowedUsage` and `password` limit them. Every answer also carries `deleted: false`; `link`, `viewLink`, `filePathsData` and `available` are computed for each answer.',
  fields: {
    name: { type: 'varchar', maxLength: 255 },
    file: { type: 'link', entity: 'File', required: true },
    active: { type: 'bool', default: true, description: 'An inactive sharing answers 404.' },
    available: { type: 'bool', computed: true, description: 'As of the answer: active, not expired, not used up, the file not deleted, and the user who made it active.' },
    link: { type: 'text', computed: true, description: '{publicUrl}/sharings/{id}.{ext}: the file as an attachment.' },
    viewLink: { type: 'text', computed: true, description: 'link?view=1: the file shown inline.' },
    filePathsData: { type: 'jsonObject', computed: true, description: '`{download, thumbnails: {small, medium, large}}` of the file (each thumbnail a URL or null).' },
    validTill: { type: 'datetime', description: 'After this moment (UTC) the link answers 410.' },
    allowedUsage: { type: 'int', min: 1, description: 'Downloads allowed; then the link answers 410. Null: no limit.' },
    used: { type: 'int', readOnly: true, default: 0, description: 'Downloads so far.' },
    password: { type: 'varchar', writeOnly: true, maxLength: 1000, description: 'Asked for by the link (Sharing-Password header or a posted form field `password`); stored hashed. Empty or null removes it.' },
  },
});
