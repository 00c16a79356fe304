/** Options of `@entity-records/sharing`. */
export interface SharingOptions {
  /** Base of `link` and `viewLink`, read for each answer; default the instance's `publicUrl` (else links start at `/sharings`). */
  publicUrl?: string;
}

/** A Sharing record as the API shows it. */
export interface SharingRecord {
  id: string;
  name: string | null;
  /** Always false in answers: deleted sharings are not shown. */
  deleted: boolean;
  active: boolean;
  available: boolean;
  link: string;
  viewLink: string;
  fileId: string;
  fileName?: string | null;
  filePathsData: { download: string; thumbnails: { small: string | null; medium: string | null; large: string | null } };
  validTill: string | null;
  allowedUsage: number | null;
  used: number;
  createdAt: string;
  modifiedAt: string;
  createdById: string | null;
  modifiedById: string | null;
  modifiedByName?: string | null;
}
