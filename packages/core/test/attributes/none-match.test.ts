import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { fetchDocument, headerNames, type Doc, type Operation } from '../openapi/support';
import { createAttribute, startAttributeApi, unique } from './support';

const etag = (res: { headers: Record<string, string> }): string => res.headers.etag as string;

// The attribute endpoints write the record as an update does, so they honour If-None-Match as an
// update does (CONTRACT §16, RFC 9110 §13.1.2); and the document names the header on every write
// of a record that honours it.
describe.each(TEST_DBS)('If-None-Match on the attribute endpoints on %s', (kind) => {
  let t: TestApi;
  let doc: Doc;
  let title: string;
  let size: string;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    doc = await fetchDocument(t);
    title = await createAttribute(t, { code: 'title', type: 'varchar', isMultilang: true });
    size = await createAttribute(t, { code: 'size', type: 'int' });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('refuses a write whose If-None-Match names the current version or * (412, nothing written); another version writes', async () => {
      const id = (await t.post(`${base}/Product`, { name: unique('P') }).expect(200)).body.id as string;
      await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: title, value: 'Chair', valueDeDE: 'Stuhl' }]).expect(200);
      const before = await t.get(`${base}/Product/${id}`).expect(200);
      const version = etag(before);
      const writes: [string, () => ReturnType<TestApi['get']>][] = [
        ['upsertAttributeValues', () => t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: title, valueDeDE: 'Sessel' }])],
        ['addAttributes', () => t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [size] })],
        ['DELETE attributeValues', () => t.del(`${base}/Product/${id}/attributeValues`).send({ attributeIds: [title] })],
      ];
      for (const ifNoneMatch of [version, `W/${version}`, `"999999", ${version}`, '*']) {
        for (const [name, write] of writes) {
          const res = await write().set('If-None-Match', ifNoneMatch);
          expect({ name, ifNoneMatch, status: res.status, code: res.body.error?.code }).toEqual({ name, ifNoneMatch, status: 412, code: 'CORE_PRECONDITION_FAILED' });
          expect(res.body.error.message).toBe(`Product '${id}' is at a version given in If-None-Match; nothing was written`);
        }
      }
      const values = (await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body as { attributeId: string; valueDeDE?: string }[];
      expect(values).toEqual([expect.objectContaining({ attributeId: title, value: 'Chair', valueDeDE: 'Stuhl' })]);
      expect(etag(await t.get(`${base}/Product/${id}`).expect(200))).toBe(version);

      await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: title, valueDeDE: 'Sessel' }]).set('If-None-Match', '"999999"').expect(200, 'true');
      await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [size] }).set('If-None-Match', version).expect(200, 'true');
      const after = (await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body as { attributeId: string }[];
      expect(after.map((v) => v.attributeId).sort()).toEqual([title, size].sort());
      // a record that does not exist is left to the write: 404 as without the header
      await t.post(`${base}/Product/nothing-here/addAttributes`, { attributeIds: [size] }).set('If-None-Match', '*').expect(404);
    });

    it('is documented with its 412 on every write of a record that honours it', () => {
      const writes: [string, string][] = [
        ['/Product/{id}', 'patch'],
        ['/Product/{id}', 'put'],
        ['/Product/{id}', 'delete'],
        ['/Product/{id}/categories', 'post'],
        ['/Product/{id}/categories', 'delete'],
        ['/Product/{id}/addAttributes', 'post'],
        ['/Product/{id}/upsertAttributeValues', 'post'],
        ['/Product/{id}/attributeValues', 'delete'],
      ];
      for (const [path, method] of writes) {
        const op = doc.paths[`${base}${path}`]?.[method] as Operation;
        expect({ path, method, headers: headerNames(doc, op) }).toEqual({ path, method, headers: expect.arrayContaining(['if-match', 'if-none-match']) });
        expect({ path, method, statuses: Object.keys(op.responses ?? {}) }).toEqual({ path, method, statuses: expect.arrayContaining(['412']) });
      }
    });
  });
});
