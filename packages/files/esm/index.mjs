// The entry for `import`: the CommonJS build's named exports, and its default export (the plugin)
// as the default, where Node would otherwise give the whole `module.exports`.
import cjs from '../dist/index.js';

export * from '../dist/index.js';
export default cjs.default;
