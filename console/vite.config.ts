import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console: a single-page app the service serves at `/` (src/console/). Built into console/dist by
 * `npm run console:build` (npm start and npm test run it); assets are hashed and served under /_console/.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/_console/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline scripts or module preload polyfill: the page's policy allows scripts from its own origin only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    // The code editor (CodeMirror, about 500 kB) is its own chunk, loaded when a script field is first shown.
    chunkSizeWarningLimit: 600,
  },
  logLevel: 'warn',
});
