import type { SchemaModel } from '../definition/normalize';
import type { OpenApiFragment, RequestParameter } from '../plugin';
import { attributePaths } from './attribute-paths';
import { cookiePath, sessionPath } from './auth-paths';
import { massUpdatePath, restorePath, upsertAsyncPath, upsertPath } from './bulk-paths';
import { addFragmentPaths } from './fragment-paths';
import { jobResultPath } from './job-paths';
import { metadataPath } from './metadata-path';
import { entityPaths, linkedPaths, relationPath } from './record-paths';
import { param, type Generation, type GenerationContext, type KindParameters, type PathItem } from './refs';
import { parameterRefs } from './request-parameters';

/** The paths of one generation, relative to its base; the paths of plugin fragments come last. */
export function generationPaths(
  schema: SchemaModel,
  fragments: readonly OpenApiFragment[],
  options: { generation: Generation; parameters: readonly RequestParameter[] },
): Record<string, PathItem> {
  const { generation } = options;
  const op = (id: string) => (generation === 'B' ? `v1_${id}` : id);
  const flattenNone = param('FlattenAttributesNone');
  const extra: KindParameters = (kind, model) =>
    parameterRefs(options.parameters, kind).map((p) => (model && !model.def.hasAttributes && p.$ref.endsWith('/FlattenAttributes') ? flattenNone : p));
  const context: GenerationContext = { generation, op, extra };
  const paths: Record<string, PathItem> = {
    '/userSession': sessionPath(op, ''),
    '/userSession/cookie': cookiePath(op, '', generation),
    '/metadata': metadataPath(op, ''),
  };
  if (generation === 'B') {
    Object.assign(paths, {
      '/App/user': sessionPath(op, 'AppUser'),
      '/App/user/cookie': cookiePath(op, 'AppUser', generation),
      '/Metadata': metadataPath(op, 'Metadata'),
    });
  }
  paths['/entityRestore'] = restorePath(op, generation);
  paths['/entityRelation'] = relationPath(context);
  paths['/upsert'] = upsertPath(op, generation, 'upsert');
  paths['/upsertAsync'] = upsertAsyncPath(op, generation);
  paths['/entityMassUpdate'] = massUpdatePath(op, generation);
  if (generation === 'B') paths['/MassActions/action/upsert'] = upsertPath(op, generation, 'massActionUpsert');
  if (schema.entities.has('Job')) paths['/Job/{id}/result'] = jobResultPath(op);
  for (const model of schema.entities.values()) {
    Object.assign(paths, entityPaths(model, context));
    if (model.def.hasAttributes) Object.assign(paths, attributePaths(model, context));
    if (generation === 'B') Object.assign(paths, linkedPaths(schema, model, context));
  }
  addFragmentPaths(paths, fragments, op);
  return paths;
}
