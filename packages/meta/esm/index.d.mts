// Types of the `import` entry (esm/index.mjs): the default export is the plugin.
import cjs from '../dist/index.js';

export * from '../dist/index.js';
declare const plugin: typeof cjs.default;
export default plugin;
