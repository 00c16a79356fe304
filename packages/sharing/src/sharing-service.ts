import { randomBytes } from 'node:crypto';
import { ApiError, hashPassword, type ApiRecord, type EntityApi, type PluginApi, type PresentHook, type RequestContext } from '@entity-records/core';

/** A date-time as stored (`YYYY-MM-DD HH:MM:SS`, UTC) or as a client may send it, in ms. */
function millis(value: string): number {
  return Date.parse(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(value) ? `${value.replace(' ', 'T')}Z` : value);
}

/** Whether a sharing can be used now: active, not past `validTill`, not used up. */
export function isAvailable(record: Record<string, unknown>, now = Date.now()): boolean {
  if (record.active !== true) return false;
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
   * The file's record as the caller may read it, for the sharing's default name; undefined when
   * `fileId` names no file the caller may read. Core judges `fileId` as any link, in the order of
   * every write (CONTRACT §15): the body and the field rights first, then a required value (400)
   * and a file that does not exist or that the caller may not read, even with no right on File at
   * all (the same 400 `CORE_INVALID_LINK`). A hook that refused here would answer before those.
   */
  private async readableFile(ctx: RequestContext, fileId: unknown): Promise<ApiRecord | undefined> {
    if (typeof fileId !== 'string' || fileId === '') return undefined;
    return this.instance()
      .repository('File')
      .get(ctx, fileId)
      .catch((error: unknown) => {
        if (error instanceof ApiError && (error.code === 'CORE_NOT_FOUND' || error.code === 'CORE_FORBIDDEN')) return undefined;
        throw error;
      });
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
      Object.assign(data, { id: newSharingId(), name: data.name ?? file?.name ?? null });
    });
    api.onRecord('beforeUpdate', 'Sharing', async ({ data }) => {
      if (data) await this.hashInBody(data);
    });
    api.onPresent('Sharing', this.links);
  }
}
