import Ajv from 'ajv';
import { compileOnce } from '../../src/util/compile-once';

describe('compileOnce', () => {
  it('compiles equal schemas once, whatever object holds them, and different ones apart', () => {
    const ajv = new Ajv();
    const compile = jest.spyOn(ajv, 'compile');
    const once = compileOnce(ajv);
    const first = once({ type: 'object', properties: { name: { type: 'string' } } });
    const again = once({ type: 'object', properties: { name: { type: 'string' } } });
    const other = once({ type: 'object', properties: { name: { type: 'integer' } } });
    expect(again).toBe(first);
    expect(other).not.toBe(first);
    expect(compile).toHaveBeenCalledTimes(2);
    expect([first({ name: 'a' }), other({ name: 'a' }), other({ name: 1 })]).toEqual([true, false, true]);
  });
});
