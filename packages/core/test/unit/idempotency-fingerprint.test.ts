import { createHash } from 'node:crypto';
import { canonicalJson, requestFingerprint } from '../../src/idempotency/fingerprint';

describe('the fingerprint of a request with an Idempotency-Key', () => {
  const shape = (body: unknown, more: Partial<{ method: string; url: string }> = {}) => requestFingerprint({ method: 'POST', url: '/api/Product', body, ...more });

  it('is the same for bodies that differ in key order only, and differs with any value, array order, method or path', () => {
    expect(canonicalJson({ b: [2, { y: 1, x: null }], a: 'é"' })).toBe('{"a":"é\\"","b":[2,{"x":null,"y":1}]}');
    expect(shape({ a: 1, b: { c: [1, 2] } })).toBe(shape({ b: { c: [1, 2] }, a: 1 }));
    for (const other of [shape({ a: 1, b: { c: [2, 1] } }), shape({ a: '1', b: { c: [1, 2] } }), shape({ a: 1, b: { c: [1, 2] } }, { method: 'PATCH' }), shape({ a: 1, b: { c: [1, 2] } }, { url: '/api/v1/Product' })]) {
      expect(other).not.toBe(shape({ a: 1, b: { c: [1, 2] } }));
    }
    expect(shape(undefined)).not.toBe(shape({}));
    expect(shape([])).not.toBe(shape({}));
  });

  it('hashes a large body in pieces to the same value as the whole text', () => {
    const big = Array.from({ length: 20_000 }, (_, i) => ({ entity: 'Product', payload: { sku: `sku-${i}`, name: `Name ${i}` } }));
    const whole = createHash('sha256').update(`POST /api/upsert\n${canonicalJson(big)}`).digest('hex');
    expect(requestFingerprint({ method: 'post', url: '/api/upsert', body: big })).toBe(whole);
  });
});
