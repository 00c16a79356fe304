import type { EntityApi } from '@entity-records/core';

/** What the public link needs of a sharing and its file, read past the API's permission checks. */
export interface ShareState {
  id: string;
  live: boolean;
  active: boolean;
  validTill: string | null;
  allowedUsage: number | null;
  used: number;
  passwordHash: string | null;
  /** Who made the sharing: it works only while that user is active. */
  createdById: string | null;
  file?: { id: string; name: string; mimeType: string | null; size: number | null; hash: string; storageKey: string };
}

const SHARING_FIELDS = ['file', 'active', 'validTill', 'allowedUsage', 'used', 'password', 'createdBy'];
const FILE_FIELDS = ['name', 'mimeType', 'fileSize', 'hash', 'storageKey'];

const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/**
 * What public links read and write of sharings and their files, through the trusted side of the
 * repositories (the link has no user): one read of each record, and one atomic count of a use.
 */
export class SharingStore {
  constructor(private readonly instance: () => EntityApi) {}

  async state(id: string): Promise<ShareState | undefined> {
    const { repository } = this.instance();
    const sharing = await repository('Sharing').readStored(id, SHARING_FIELDS);
    if (!sharing) return undefined;
    const fileId = sharing.file as string | null;
    const file = fileId ? await repository('File').readStored(fileId, FILE_FIELDS) : undefined;
    return {
      id,
      live: !sharing.deleted,
      active: sharing.active === true,
      validTill: (sharing.validTill as string | null) ?? null,
      allowedUsage: numberOrNull(sharing.allowedUsage),
      used: Number(sharing.used ?? 0),
      passwordHash: (sharing.password as string | null) ?? null,
      createdById: (sharing.createdBy as string | null) ?? null,
      ...(file && !file.deleted && file.storageKey
        ? {
            file: {
              id: fileId as string,
              name: file.name as string,
              mimeType: (file.mimeType as string | null) ?? null,
              size: numberOrNull(file.fileSize),
              hash: file.hash as string,
              storageKey: file.storageKey as string,
            },
          }
        : {}),
    };
  }

  /**
   * Counts one use, only while the sharing is live, active, not expired and not used up: one
   * statement, so concurrent downloads on any number of processes never exceed the limit.
   */
  async use(id: string): Promise<boolean> {
    const where = [
      { type: 'isTrue', attribute: 'active' },
      { type: 'or', value: [{ type: 'isNull', attribute: 'validTill' }, { type: 'future', attribute: 'validTill' }] },
    ];
    return this.instance().repository('Sharing').incrementBelow(id, { counter: 'used', limit: 'allowedUsage', where });
  }
}
