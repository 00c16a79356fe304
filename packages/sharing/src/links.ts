import { systemContext, type ApiRecord, type EntityApi, type PresentHook, type Repository } from '@entity-records/core';
import type { FileService } from '@entity-records/files';
import type { SharingOptions } from './declarations';
import { isAvailable } from './sharing-service';

/** The extension of a file name for the link: letters and digits, lower case; `bin` when there is none. */
export function linkExtension(name: unknown): string {
  const match = /\.([A-Za-z0-9]{1,16})$/.exec(typeof name === 'string' ? name : '');
  return match ? match[1].toLowerCase() : 'bin';
}

/** The ids of the users who made these sharings that are active (a sharing of any other one answers 404). */
async function activeMakers(users: Repository, records: readonly ApiRecord[]): Promise<Set<string>> {
  const ids = [...new Set(records.map((r) => r.createdById).filter((id): id is string => typeof id === 'string'))];
  const found = await users.findByIds(systemContext(), ids, { select: ['isActive'] });
  return new Set(ids.filter((id) => found.get(id)?.isActive === true));
}

/** Fields of a Sharing that answers compute. */
const COMPUTED = ['link', 'viewLink', 'filePathsData', 'available'];
/** What computing them reads of the sharing. */
const NEEDED = ['file', 'active', 'validTill', 'allowedUsage', 'used', 'createdBy'];

/**
 * The present stage of Sharing: every answer shows `deleted: false`, and `link`, `viewLink` and
 * `filePathsData` made from the public URL of the moment (never stored, so a new `publicUrl` holds
 * for old sharings too), and `available` as of now: active, not expired, not used up, its file not
 * deleted, and the user who made it active (as the public link answers). The files of a page are
 * read in one query, and their makers in another.
 */
export function sharingLinks(parts: { files: FileService; options: SharingOptions; instance: () => EntityApi }): PresentHook {
  const base = () => (parts.options.publicUrl ?? parts.instance().options.publicUrl ?? '').replace(/\/+$/, '');
  return {
    adds: { deleted: { type: 'boolean', const: false, description: 'Always false: deleted sharings are not shown.' } },
    load: ({ fields }) => (fields.some((f) => COMPUTED.includes(f.name)) ? NEEDED : []),
    present: async ({ fields, records, repository }) => {
      for (const record of records) record.deleted = false;
      const shown = new Set(fields.filter((f) => COMPUTED.includes(f.name)).map((f) => f.name));
      if (shown.size === 0) return;
      const fileIds = records.map((r) => r.fileId).filter((id): id is string => typeof id === 'string');
      const files = await repository('File').findByIds(systemContext(), fileIds, { select: ['name', 'width'] });
      const makers = shown.has('available') ? await activeMakers(repository('User'), records) : undefined;
      for (const record of records) {
        const fileId = String(record.fileId);
        const file: ApiRecord | undefined = files.get(fileId);
        const link = `${base()}/sharings/${encodeURIComponent(record.id)}.${linkExtension(file?.name)}`;
        if (shown.has('link')) record.link = link;
        if (shown.has('viewLink')) record.viewLink = `${link}?view=1`;
        if (shown.has('filePathsData')) {
          record.filePathsData = { download: parts.files.downloadUrl(fileId), thumbnails: parts.files.thumbnailUrls(fileId, typeof file?.width === 'number') };
        }
        if (makers) record.available = file !== undefined && isAvailable(record) && (record.createdById === null || makers.has(String(record.createdById)));
      }
    },
  };
}
