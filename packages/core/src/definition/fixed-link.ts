import { ApiError } from '../errors';
import type { RecordHook } from '../hooks';

/**
 * A `beforeUpdate` hook that keeps the single link `link` of a record as it was created: an
 * option stays in its list, a unit in its measure. Links to it are judged by that parent (an
 * option of the field's own list, a unit of the attribute's measure), so moving the record would
 * leave every link to it pointing at a record of another parent. Sending the stored id back is
 * fine; another id, `null` or a link object (resolved only later in the write) is 400
 * `CORE_READ_ONLY_FIELD`, as for a read-only field (`null` of a required link is the 400 of a
 * required value first: every route judges the body as sent before any hook). The list side of the link
 * (`ExtensibleEnum.options`, `Measure.units`) is read-only for the same reason: adding a record
 * there moves it from its parent.
 */
export function keepLink(link: string): RecordHook {
  const key = `${link}Id`;
  return ({ data, existing }) => {
    if (!data) return;
    const moved = (Object.hasOwn(data, key) && (data[key] ?? null) !== (existing?.[key] ?? null)) || Object.hasOwn(data, link);
    if (!moved) return;
    const path = Object.hasOwn(data, link) ? link : key;
    const message = `${path} is read-only: it cannot be changed once the record exists`;
    throw new ApiError('CORE_READ_ONLY_FIELD', message, { details: { issues: [{ path: [path], code: 'read_only', message }] } });
  };
}
