import { meta } from './plugin';

export { meta };
export { META_CATEGORIES } from './declarations';
export type { MetaCategoryName, MetaOptions } from './declarations';
export { permissionsCategory } from './permissions';
export { optionsCategory } from './options';
export { auditCategory } from './audit';
export type { Person } from './audit';
export default meta;
