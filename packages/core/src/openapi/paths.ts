import type { SchemaModel } from '../definition/normalize';
import type { OpenApiFragment, RequestParameter } from '../plugin';
import { attributePaths } from './attribute-paths';
import { cookiePath, sessionPath } from './auth-paths';
import { massUpdatePath, restorePath, upsertAsyncPath, upsertPath } from './bulk-paths';
import { changePaths, linkWritePaths, recordStreamPath } from './event-paths';
import { addFragmentPaths } from './fragment-paths';
import { jobResultPath } from './job-paths';
import { redeliverPath } from './webhook-paths';
import { metadataPath } from './metadata-path';
import { entityPaths, linkedPaths, relationPath } from './record-paths';
import { param, type Generation, type GenerationContext, type KindParameters, type PathItem } from './refs';
import { hasAttributeTypes } from './parameters';
import { parameterRefs } from './request-parameters';

/** The paths of one generation, relative to its base; the paths of plugin fragments come last. */
export function generationPaths(
  schema: SchemaModel,
  fragments: readonly OpenApiFragment[],
  options: { generation: Generation; parameters: readonly RequestParameter[] },
): Record<string, PathItem> {
  const { generation } = options;
  const op = (id: string) => `${generation.operationPrefix}${id}`;
  const flattenNone = param('FlattenAttributesNone');
  const extra: KindParameters = (kind, model) =>
    parameterRefs(options.parameters, kind).map((p) => (model && !model.def.hasAttributes && p.$ref.endsWith('/FlattenAttributes') ? flattenNone : p));
  const context: GenerationContext = { generation, op, extra };
  const paths: Record<string, PathItem> = {};
  for (const { path, name } of generation.sessionPaths) {
    paths[path] = sessionPath(op, name);
    paths[`${path}/cookie`] = cookiePath(op, name, generation);
  }
  for (const { path, name } of generation.metadataPaths) paths[path] = metadataPath(op, name);
  paths['/entityRestore'] = restorePath(op, generation);
  paths['/entityRelation'] = relationPath(context);
  // The bulk writes take attribute values under Flatten-Attributes, as record writes do.
  const bulkHeaders = hasAttributeTypes(schema) ? [param('FlattenAttributesWrites')] : [];
  for (const { path, name } of generation.upsertPaths) paths[path] = upsertPath(op, generation, { name, headers: bulkHeaders });
  paths['/upsertAsync'] = upsertAsyncPath(op, generation, bulkHeaders);
  paths['/entityMassUpdate'] = massUpdatePath(op, generation, bulkHeaders);
  if (schema.entities.has('Job')) paths['/Job/{id}/result'] = jobResultPath(op);
  if (schema.entities.has('WebhookDelivery')) paths['/WebhookDelivery/{id}/redeliver'] = redeliverPath(op);
  for (const model of schema.entities.values()) {
    Object.assign(paths, entityPaths(model, context));
    if (model.def.hasAttributes) Object.assign(paths, attributePaths(model, context));
    Object.assign(paths, recordStreamPath(model, context));
    if (generation.linkRoutes) Object.assign(paths, linkedPaths(schema, model, context));
    for (const [path, item] of Object.entries(linkWritePaths(model, context))) paths[path] = { ...paths[path], ...item };
  }
  Object.assign(paths, changePaths(op, generation));
  addFragmentPaths(paths, fragments, op);
  return paths;
}
