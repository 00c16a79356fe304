import { filesPlugin } from './plugin';

export default filesPlugin;
export { filesPlugin, filesOf } from './plugin';
export { FILES_ERRORS } from './errors';
export { FileEntity } from './file-entity';
export { FileService } from './file-service';
export { LocalStorage } from './storage/local-storage';
export { sendContent, contentDisposition } from './send-content';
export { readStored } from './content';
export type { StorageLocation } from './content';
export type { ContentResponse } from './send-content';
export { requestedRange, parseRange } from './byte-range';
export type { ByteRange } from './byte-range';
export { isForbiddenAddress } from '@entity-records/core';
export { redirectTarget } from './url-fetch';
export { THUMBNAIL_SIZES } from './declarations';
export { rangeParameters, rangeResponses } from './openapi';
export type { FilesOptions, StorageDriver, FileRecord, StoredContent, ThumbnailSize } from './declarations';
