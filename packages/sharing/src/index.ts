import { sharingPlugin } from './plugin';

export default sharingPlugin;
export { sharingPlugin } from './plugin';
export { SharingEntity } from './sharing-entity';
export { isAvailable } from './sharing-service';
export type { SharingOptions, SharingRecord } from './declarations';
