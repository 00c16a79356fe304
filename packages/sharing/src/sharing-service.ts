import { randomBytes } from 'node:crypto';
import { ApiError, hashPassword, type ApiRecord, type EntityApi, type PluginApi, type PresentHook, type RequestContext } from '@entity-records/core';

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

/**
 * The id of a new sharing, which is the secret of its public link: 128 random bits, url-safe
 * (22 characters of `A-Z a-z 0-9 _ -`). A time-ordered id would leave only some 62 bits to guess.
 */
const newSharingId = () => randomBytes(16).toString('base64url');

/** Record hooks of Sharing: the file must be readable, passwords are hashed, answers get their links. */
export class SharingService {
  constructor(
    private readonly instance: () => EntityApi,
    private readonly links: PresentHook,
  ) {}

  /**
   * The file, as the caller may read it. A file that does not exist and one the caller may not
   * read are the same 400 `CORE_INVALID_LINK` of any link (CONTRACT §15): a sharing never tells
   * which, and never leaks a file.
   */
  private async readableFile(ctx: RequestContext, fileId: unknown): Promise<ApiRecord> {
    if (typeof fileId !== 'string' || fileId === '') {
      throw new ApiError('CORE_VALIDATION_FAILED', 'fileId is required', { details: { issues: [{ path: ['fileId'], code: 'required', message: 'fileId is required' }] } });
    }
    try {
      return await this.instance().repository('File').get(ctx, fileId);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'CORE_NOT_FOUND') throw error;
      throw new ApiError('CORE_INVALID_LINK', `File '${fileId}' not found (fileId)`, { details: { entity: 'File', field: 'fileId', ids: [fileId] } });
    }
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

  installHooks(api: PluginApi): void {
    api.onRecord('beforeCreate', 'Sharing', async ({ ctx, data }) => {
      if (!data) return;
      const file = await this.readableFile(ctx, data.fileId);
      await this.hashInBody(data);
      Object.assign(data, { id: newSharingId(), name: data.name ?? file.name ?? null });
    });
    api.onRecord('beforeUpdate', 'Sharing', async ({ ctx, data, existing }) => {
      if (!data || !existing) return;
      if (data.fileId !== undefined && data.fileId !== existing.fileId) await this.readableFile(ctx, data.fileId);
      await this.hashInBody(data);
    });
    api.onPresent('Sharing', this.links);
  }
}
