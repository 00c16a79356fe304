import { ApiError, hashPassword, uuidv7, type ApiRecord, type EntityApi, type PluginApi, type RequestContext } from '@entity-records/core';
import type { SharingOptions } from './declarations';

/** The extension of a file name for the link: letters and digits, lower case; `bin` when there is none. */
export function linkExtension(name: unknown): string {
  const match = /\.([A-Za-z0-9]{1,16})$/.exec(typeof name === 'string' ? name : '');
  return match ? match[1].toLowerCase() : 'bin';
}

/** A date-time as stored (`YYYY-MM-DD HH:MM:SS`, UTC) or as a client may send it, in ms. */
function millis(value: string): number {
  return Date.parse(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(value) ? `${value.replace(' ', 'T')}Z` : value);
}

/** Whether a sharing can be used now: active, not past `validTill`, not used up. */
export function isAvailable(record: Record<string, unknown>, now = Date.now()): boolean {
  if (record.active === false) return false;
  if (typeof record.validTill === 'string' && millis(record.validTill) <= now) return false;
  if (typeof record.allowedUsage === 'number' && Number(record.used ?? 0) >= record.allowedUsage) return false;
  return true;
}

/** Record hooks of Sharing: the file must be readable, links are made, passwords hashed. */
export class SharingService {
  constructor(
    private readonly options: SharingOptions,
    private readonly instance: () => EntityApi,
  ) {}

  private get base(): string {
    return (this.options.publicUrl ?? this.instance().options.publicUrl ?? '').replace(/\/+$/, '');
  }

  link(id: string, fileName: unknown): string {
    return `${this.base}/sharings/${encodeURIComponent(id)}.${linkExtension(fileName)}`;
  }

  /** The file, as the caller may read it (404 when not, so a sharing never leaks a file). */
  private async readableFile(ctx: RequestContext, fileId: unknown): Promise<ApiRecord> {
    if (typeof fileId !== 'string' || fileId === '') {
      throw new ApiError('CORE_VALIDATION_FAILED', 'fileId is required', { details: { issues: [{ path: ['fileId'], code: 'required', message: 'fileId is required' }] } });
    }
    return this.instance().repository('File').get(ctx, fileId);
  }

  private async hashInBody(data: Record<string, unknown>): Promise<void> {
    if (!('password' in data)) return;
    const password = data.password;
    if (password === null || password === '') {
      // Stored as '' rather than NULL: core skips a write-only field whose new value is null, as it
      // cannot tell that from the (hidden) stored value.
      data.password = '';
      return;
    }
    if (typeof password !== 'string' || password.length > 1000) {
      throw new ApiError('CORE_VALIDATION_FAILED', 'password must be a string of at most 1000 characters', {
        details: { issues: [{ path: ['password'], code: 'invalid_type', message: 'password must be a string' }] },
      });
    }
    data.password = await hashPassword(password, this.instance().options.auth?.passwordCost);
  }

  /** Link, view link and file paths of a sharing of this file. */
  private fileFields(id: string, file: ApiRecord): Record<string, unknown> {
    const link = this.link(id, file.name);
    return {
      link,
      viewLink: `${link}?view=1`,
      filePathsData: { download: file.downloadUrl ?? null, thumbnails: file.thumbnails ?? { small: null, medium: null, large: null } },
    };
  }

  installHooks(api: PluginApi): void {
    api.onRecord('beforeCreate', 'Sharing', async ({ ctx, data }) => {
      if (!data) return;
      const file = await this.readableFile(ctx, data.fileId);
      const id = typeof data.id === 'string' && data.id !== '' ? data.id : uuidv7();
      await this.hashInBody(data);
      Object.assign(data, {
        id,
        name: data.name ?? file.name ?? null,
        ...this.fileFields(id, file),
        available: isAvailable({ ...data, used: 0 }),
      });
    });
    api.onRecord('beforeUpdate', 'Sharing', async ({ ctx, id, data, existing }) => {
      if (!data || !existing) return;
      if (data.fileId !== undefined && data.fileId !== existing.fileId) {
        Object.assign(data, this.fileFields(id as string, await this.readableFile(ctx, data.fileId)));
      }
      await this.hashInBody(data);
      const available = isAvailable({ ...existing, ...data });
      if (available !== existing.available) data.available = available;
    });
    api.onRecord('afterRead', 'Sharing', ({ record }) => {
      if (!record) return;
      if (record.available === true && !isAvailable(record)) record.available = false;
      record.deleted = false;
    });
  }
}
