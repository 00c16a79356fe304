import { sharingPlugin } from './plugin';

export default sharingPlugin;
export { sharingPlugin } from './plugin';
export { SHARING_ERRORS } from './errors';
export { SharingEntity } from './sharing-entity';
export { isAvailable } from './sharing-service';
export type { SharingOptions, SharingRecord } from './declarations';
